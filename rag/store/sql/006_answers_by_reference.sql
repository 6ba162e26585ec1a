-- Answers keep references to runbook text, not copies (issue 10): each evidence item keeps its
-- chunk id and scores, each citation its chunk id and the quote's [start, end) position in the
-- chunk's content. A redraw re-reads the chunks under row-level security.
-- Rows written before this keep a citation's position only where its quote occurs verbatim in
-- the chunk; a reflowed quote (verified modulo whitespace) gets none and is shown as gone.
-- The response_url is not kept either: it is a bearer credential for posting into a channel.

UPDATE answers SET result = jsonb_build_object(
    'v', 2,
    'status', result -> 'status',
    'reason_code', result -> 'reason_code',
    'answer', result -> 'answer',
    'provider', result -> 'provider',
    'retryable', result -> 'retryable',
    'tenant', result -> 'tenant',
    'service', result -> 'service',
    'fallback_reason', result -> 'fallback_reason',
    'answer_id', result -> 'answer_id',
    'evidence', (
        SELECT coalesce(jsonb_agg(jsonb_build_object(
            'chunk_id', e -> 'chunk_id', 'cosine', e -> 'cosine',
            'vector_rank', e -> 'vector_rank', 'keyword_rank', e -> 'keyword_rank',
            'score', e -> 'score', 'hit_reasons', coalesce(e -> 'hit_reasons', '[]'::jsonb)
        ) ORDER BY i), '[]'::jsonb)
        FROM jsonb_array_elements(result -> 'evidence') WITH ORDINALITY AS x(e, i)
    ),
    'citations', (
        SELECT coalesce(jsonb_agg(jsonb_build_object(
            'n', c -> 'n',
            'chunk_id', c -> 'evidence' -> 'chunk_id',
            'quote', CASE WHEN at > 0
                     THEN jsonb_build_array(at - 1, at - 1 + length(c ->> 'quote'))
                     ELSE 'null'::jsonb END
        ) ORDER BY i), '[]'::jsonb)
        FROM jsonb_array_elements(result -> 'citations') WITH ORDINALITY AS x(c, i),
        LATERAL (SELECT CASE WHEN c ->> 'quote' <> ''
                             THEN strpos(c -> 'evidence' ->> 'content', c ->> 'quote')
                             ELSE 0 END AS at) AS p
    )
)
WHERE NOT result ? 'v';

ALTER TABLE answers DROP COLUMN response_url;
