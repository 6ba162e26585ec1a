"""The SQL of hybrid retrieval: both halves in one statement, each with the tenant and "not
superseded" in its own WHERE, and the tenant's vocabulary statistics for a question's lexemes.
"""

from __future__ import annotations

import textwrap

# Okapi BM25's usual constants (k1, b); a heading or title holding a term counts it once more.
BM25_PARAMS = {"k1": 1.2, "b": 0.75, "heading_weight": 1.0}

# The vector half of HYBRID_QUERY: the tenant's nearest chunks of the question's model. The hybrid
# query embeds this very text, so a benchmark can time the shipped vector search on its own.
VECTOR_QUERY = """
SELECT chunk_id, embedding::halfvec({dim}) <=> %(embedding)s::halfvec({dim}) AS distance
FROM chunks
WHERE tenant_id = %(tenant)s AND NOT superseded AND embedding_dim = {dim}
  AND embedding_model = %(model)s
  AND (%(service)s::text IS NULL OR service = %(service)s::text)
ORDER BY embedding::halfvec({dim}) <=> %(embedding)s::halfvec({dim})
LIMIT %(candidates)s
"""

_HYBRID_BEFORE_VECTOR = """
WITH totals AS (
    SELECT chunks AS n, greatest(total_length::float8 / greatest(chunks, 1), 1.0) AS avg_length
    FROM tenant_text_stats WHERE tenant_id = %(tenant)s
),
question_terms AS (
    SELECT DISTINCT lexeme FROM unnest(to_tsvector('english', %(question)s))
    WHERE strpos(lexeme, E'\\\\') = 0
),
terms AS (
    -- Okapi BM25 inverse document frequency over the tenant's current chunks.
    SELECT q.lexeme, s.df, quote_literal(q.lexeme)::tsquery AS anywhere,
           ln(1 + (totals.n - s.df + 0.5) / (s.df + 0.5)) AS idf
    FROM question_terms AS q
    JOIN term_stats AS s ON s.tenant_id = %(tenant)s AND s.lexeme = q.lexeme AND s.df > 0
    CROSS JOIN totals
),
ranked_terms AS (
    SELECT lexeme, anywhere, idf,
           greatest(idf, 0) * (1 + greatest(%(heading_weight)s, 0)) AS weight,
           coalesce(sum(df) OVER (ORDER BY df, lexeme
                                  ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0)
               AS rarer_df
    FROM terms
),
keyword_query AS (
    -- The seed is the rarest terms until their chunks number `candidates`: every chunk holding
    -- a seed term is scored. `rest_weight` bounds what all the other terms together can add to
    -- a chunk's sum (a term adds at most idf * (1 + heading_weight) before length scaling).
    SELECT tsquery_or_agg(anywhere) FILTER (WHERE rarer_df < %(candidates)s) AS seed,
           coalesce(sum(weight) FILTER (WHERE rarer_df >= %(candidates)s), 0) AS rest_weight
    FROM ranked_terms
),
vector_hits AS (
    SELECT chunk_id, row_number() OVER (ORDER BY distance, chunk_id) AS rank
    FROM (
"""
_HYBRID_AFTER_VECTOR = """    ) AS nearest
),
seed_scored AS (
    -- Every current chunk of the tenant holding a seed term, with its BM25: binary term
    -- frequency (a lexeme's presence, counted again when a title or heading holds it) and the
    -- tenant's own average chunk length. tenant_chunks_matching() reaches the GIN index, which
    -- row-level security keeps out of this query's own reach (rag/store/sql/013).
    SELECT m.chunk_id, f.length_factor
        * (SELECT sum(t.idf * (1 + %(heading_weight)s * (m.heading_tsv @@ t.anywhere)::int))
           FROM terms AS t WHERE m.tsv @@ t.anywhere) AS bm25
    FROM keyword_query, totals,
         tenant_chunks_matching(%(tenant)s, keyword_query.seed, {dim}, %(model)s,
                                %(service)s::text) AS m,
         LATERAL (SELECT (%(k1)s + 1) / (1 + %(k1)s * (1 - %(b)s + %(b)s * length(m.tsv)
                                                                / totals.avg_length))
                      AS length_factor) AS f
),
keyword_bar AS (
    -- The `candidates`-th best seed score: the final top `candidates` all score at least this.
    SELECT count(*) AS n, min(bm25) AS score
    FROM (SELECT bm25 FROM seed_scored ORDER BY bm25 DESC LIMIT %(candidates)s) AS best
),
essential_terms AS (
    -- MaxScore: the lightest non-seed terms whose weights together, at the shortest possible
    -- length, stay below the bar cannot lift a chunk holding only them into the top
    -- `candidates`; only chunks holding one of the others ("essential") need fetching. Until
    -- the seed fills `candidates` every term is essential.
    SELECT tsquery_or_agg(anywhere) AS q
    FROM (SELECT anywhere, sum(weight) OVER (ORDER BY weight, lexeme ROWS UNBOUNDED PRECEDING)
                               AS reach
          FROM ranked_terms WHERE rarer_df >= %(candidates)s) AS rest
    WHERE (SELECT n FROM keyword_bar) < %(candidates)s
       OR (1 + 1e-9) * (%(k1)s + 1) / (1 + %(k1)s * (1 - %(b)s)) * reach
          >= (SELECT score FROM keyword_bar)
),
late_length AS (
    -- The longest chunk whose bound (below) could still reach the bar, solved for its length
    -- and taken a little longer against rounding: the fetch leaves longer chunks in the table.
    -- No cut until the seed fills `candidates`.
    SELECT CASE WHEN bar.n >= %(candidates)s AND bar.score > 0 AND %(b)s > 0 AND %(k1)s > 0
                THEN (1 + 1e-6) * totals.avg_length / %(b)s
                     * (((%(k1)s + 1) * (1 + 1e-9) * keyword_query.rest_weight / bar.score - 1)
                        / %(k1)s - (1 - %(b)s))
           END AS max_length
    FROM keyword_bar AS bar, totals, keyword_query
),
keyword_late AS (
    -- Chunks without a seed term that hold an essential one. Such a chunk scores at most
    -- length_factor * rest_weight (taken a hair higher, against rounding): only those that could
    -- still reach the bar are scored, so the top `candidates` are exactly those of scoring every
    -- chunk.
    SELECT m.chunk_id, f.length_factor
        * (SELECT sum(t.idf * (1 + %(heading_weight)s * (m.heading_tsv @@ t.anywhere)::int))
           FROM terms AS t WHERE m.tsv @@ t.anywhere) AS bm25
    FROM essential_terms, keyword_query, late_length, totals,
         tenant_chunks_matching(%(tenant)s, essential_terms.q, {dim}, %(model)s,
                                %(service)s::text, keyword_query.seed,
                                late_length.max_length) AS m,
         LATERAL (SELECT (%(k1)s + 1) / (1 + %(k1)s * (1 - %(b)s + %(b)s * length(m.tsv)
                                                                / totals.avg_length))
                      AS length_factor) AS f
    WHERE (SELECT n FROM keyword_bar) < %(candidates)s
       OR (1 + 1e-9) * f.length_factor * keyword_query.rest_weight
          >= (SELECT score FROM keyword_bar)
),
keyword_scored AS (
    SELECT chunk_id, bm25 FROM seed_scored
    UNION ALL
    SELECT chunk_id, bm25 FROM keyword_late
),
keyword_hits AS (
    SELECT chunk_id, bm25, row_number() OVER (ORDER BY bm25 DESC, chunk_id) AS rank
    FROM keyword_scored
    ORDER BY bm25 DESC, chunk_id
    LIMIT %(candidates)s
),
named_hits AS (
    -- The sections of the runbook the question names by its alert (%(named)s, NULL when none)
    -- nearest the question, whatever words they share with it: "MCCDrainError on worker-1,
    -- what do i do" shares none with that runbook's Mitigation.
    SELECT chunk_id FROM chunks
    WHERE tenant_id = %(tenant)s AND document_id = %(named)s::text AND NOT superseded
      AND embedding_dim = {dim} AND embedding_model = %(model)s
      AND (%(service)s::text IS NULL OR service = %(service)s::text)
    ORDER BY embedding::halfvec({dim}) <=> %(embedding)s::halfvec({dim}), chunk_id
    LIMIT %(named_sections)s
),
hit_ids AS MATERIALIZED (
    -- Plain ids to join on: row-level security lets only leakproof conditions use an index,
    -- and coalesce() over a full join is not one, which cost a hash of the whole tenant.
    SELECT chunk_id FROM vector_hits UNION SELECT chunk_id FROM keyword_hits
    UNION SELECT chunk_id FROM named_hits
)
SELECT c.chunk_id, c.document_id, c.version, d.title, c.heading_path, c.content, d.url, d.owner,
       d.updated, c.service,
       1 - (c.embedding::halfvec({dim}) <=> %(embedding)s::halfvec({dim})) AS cosine,
       coalesce(k.bm25, 0.0) AS bm25,
       ARRAY(SELECT t.lexeme FROM terms AS t WHERE c.tsv @@ t.anywhere) AS matched,
       v.rank AS vector_rank, k.rank AS keyword_rank
FROM hit_ids AS h
JOIN chunks AS c ON c.tenant_id = %(tenant)s AND c.chunk_id = h.chunk_id
LEFT JOIN vector_hits AS v ON v.chunk_id = h.chunk_id
LEFT JOIN keyword_hits AS k ON k.chunk_id = h.chunk_id
JOIN documents AS d
  ON d.tenant_id = %(tenant)s AND d.document_id = c.document_id AND d.version = c.version
WHERE NOT c.superseded
"""
# The query search() runs: both halves in one statement, each with the tenant and "not
# superseded" in its own WHERE. Placeholders: {dim} (a literal), %(tenant)s, %(question)s,
# %(embedding)s, %(model)s, %(service)s, %(candidates)s, %(named)s, %(named_sections)s and
# BM25_PARAMS. The keyword half is
# bounded but exact: it scores the chunks holding the question's rarest terms (fetched through
# the GIN index), then only those other chunks that hold a term able to lift them into the top
# `candidates` and whose length-scaled upper bound reaches the `candidates`-th best seed score.
HYBRID_QUERY = "".join(
    (
        _HYBRID_BEFORE_VECTOR,
        textwrap.indent(VECTOR_QUERY.lstrip("\n"), " " * 8),
        _HYBRID_AFTER_VECTOR,
    )
)


# The tenant's document frequency of each of the question's lexemes (0: never used), with the
# question's own words that give each lexeme (``%(words)s``: its runs of letters and digits, each
# parsed alone; ts_debug() would say the same for the whole question at several times the cost).
# ``%(question)s`` also holds the other spellings of its phrasal verbs
# (``rag.retrieval.compounds``): a
# lexeme only they give comes back (flagged as not asked) when the tenant uses it.
VOCABULARY = """
WITH spelled AS (
    SELECT w.word, t.lexeme
    FROM unnest(%(words)s::text[]) AS w(word), unnest(to_tsvector('english', w.word)) AS t
)
SELECT q.lexeme, coalesce(s.df, 0),
       coalesce(array_agg(DISTINCT spelled.word) FILTER (WHERE spelled.word IS NOT NULL), '{}'),
       q.lexeme = ANY (tsvector_to_array(to_tsvector('english', %(asked)s))) AS asked
FROM (SELECT DISTINCT lexeme FROM unnest(to_tsvector('english', %(question)s))) AS q
LEFT JOIN term_stats AS s ON s.tenant_id = %(tenant)s AND s.lexeme = q.lexeme
LEFT JOIN spelled ON spelled.lexeme = q.lexeme
WHERE s.df > 0 OR q.lexeme = ANY (tsvector_to_array(to_tsvector('english', %(asked)s)))
GROUP BY q.lexeme, s.df
"""
# Each lexeme of an other spelling with the lexemes of the words the question wrote instead
# ("failov" for "fail over" -> "fail"), so the gate credits a chunk holding either spelling.
SPELLED_AS = """
SELECT o.lexeme, a.lexeme
FROM unnest(%(written)s::text[], %(other)s::text[]) AS p(written, other),
     unnest(to_tsvector('english', p.other)) AS o, unnest(to_tsvector('english', p.written)) AS a
"""

TENANT_SIZE = "SELECT chunks FROM tenant_text_stats WHERE tenant_id = %(tenant)s"
