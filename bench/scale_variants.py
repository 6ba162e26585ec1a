"""The scale benchmark's labelled alternatives to the shipped retrieval: session settings for the
vector query, and text edits of ``rag.HYBRID_QUERY``'s keyword half."""

from __future__ import annotations

from dataclasses import dataclass

from rag import HYBRID_QUERY, Store


@dataclass(frozen=True)
class VectorMode:
    """Session settings for one way of running the vector query (``SET LOCAL`` each)."""

    name: str
    exact: bool
    settings: tuple[tuple[str, str], ...]


# What rag.search() sets on each path (ef_search = max(100, candidates)).
EXACT = VectorMode("exact", True, (("enable_indexscan", "off"),))
HNSW = VectorMode(
    "hnsw", False, (("hnsw.iterative_scan", "strict_order"), ("hnsw.ef_search", "100"))
)
# Labelled alternatives to the shipped settings, measured on the vector query only.
VARIANTS = {
    "hnsw_relaxed_order": VectorMode(
        "hnsw_relaxed_order",
        False,
        (("hnsw.iterative_scan", "relaxed_order"), ("hnsw.ef_search", "100")),
    ),
    "hnsw_ef_search_200": VectorMode(
        "hnsw_ef_search_200",
        False,
        (("hnsw.iterative_scan", "strict_order"), ("hnsw.ef_search", "200")),
    ),
    "hnsw_max_scan_tuples_100k": VectorMode(
        "hnsw_max_scan_tuples_100k",
        False,
        (
            ("hnsw.iterative_scan", "strict_order"),
            ("hnsw.ef_search", "100"),
            ("hnsw.max_scan_tuples", "100000"),
        ),
    ),
    "exact_jit_off": VectorMode(
        "exact_jit_off", True, (("enable_indexscan", "off"), ("jit", "off"))
    ),
}

# Labelled alternatives to rag.HYBRID_QUERY's keyword half, each a text edit of the shipped SQL.
_KEYWORD_OR = """    SELECT tsquery_or_agg(plainto_tsquery('simple', t.lexeme)) AS q
    FROM unnest(to_tsvector('english', %(question)s)) AS t"""
# Leave out lexemes that most chunks contain (pg_stats' most common elements of chunks.tsv,
# passed in as %(common)s); when every lexeme is common, keep them all as before.
_KEYWORD_WITHOUT_COMMON = """    SELECT coalesce(
        tsquery_or_agg(plainto_tsquery('simple', t.lexeme))
            FILTER (WHERE t.lexeme <> ALL(%(common)s::text[])),
        tsquery_or_agg(plainto_tsquery('simple', t.lexeme))) AS q
    FROM unnest(to_tsvector('english', %(question)s)) AS t"""
# Build the OR query first, in its own statement, and pass it in as a value: the planner then
# sees the actual lexemes and their frequencies instead of guessing at an opaque CTE.
_KEYWORD_PARAMETER = """    SELECT %(tsquery)s::tsquery AS q"""
_TSQUERY_ALL = (
    "SELECT tsquery_or_agg(plainto_tsquery('simple', t.lexeme))::text "
    "FROM unnest(to_tsvector('english', %(question)s)) AS t"
)
_TSQUERY_WITHOUT_COMMON = (
    "SELECT coalesce(tsquery_or_agg(plainto_tsquery('simple', t.lexeme)) "
    "FILTER (WHERE t.lexeme <> ALL(%(common)s::text[])), "
    "tsquery_or_agg(plainto_tsquery('simple', t.lexeme)))::text "
    "FROM unnest(to_tsvector('english', %(question)s)) AS t"
)


@dataclass(frozen=True)
class KeywordVariant:
    """Text edits of rag.HYBRID_QUERY, and optionally a statement that builds %(tsquery)s."""

    edits: tuple[tuple[str, str], ...]
    prepare: str | None = None
    common_share: float = 0.10  # what "common" means for %(common)s: in more of the chunks


HYBRID_VARIANTS = {
    "keyword_ts_rank": KeywordVariant((("ts_rank_cd(", "ts_rank("),)),
    "keyword_without_common_terms": KeywordVariant(((_KEYWORD_OR, _KEYWORD_WITHOUT_COMMON),)),
    "keyword_without_terms_in_25pct": KeywordVariant(
        ((_KEYWORD_OR, _KEYWORD_WITHOUT_COMMON),), common_share=0.25
    ),
    "keyword_tsquery_parameter": KeywordVariant(
        ((_KEYWORD_OR, _KEYWORD_PARAMETER),), prepare=_TSQUERY_ALL
    ),
    "keyword_tsquery_parameter_without_common_terms": KeywordVariant(
        ((_KEYWORD_OR, _KEYWORD_PARAMETER),), prepare=_TSQUERY_WITHOUT_COMMON
    ),
}
_COMMON_LEXEMES = """
SELECT elem FROM (
    SELECT unnest(most_common_elems::text::text[]) AS elem,
           unnest(most_common_elem_freqs[1:cardinality(most_common_elems::text::text[])]) AS freq
    FROM pg_stats WHERE schemaname = 'public' AND tablename = 'chunks' AND attname = 'tsv'
) AS stats
WHERE freq > %(share)s
"""


def hybrid_variant_sql(name: str) -> str | None:
    """rag.HYBRID_QUERY with the variant's edits, or None when the shipped SQL no longer matches."""
    text = HYBRID_QUERY
    for old, new in HYBRID_VARIANTS[name].edits:
        if old not in text:
            return None
        text = text.replace(old, new)
    return text


async def common_lexemes(store: Store, share: float) -> list[str]:
    async with store.pool.connection() as conn:
        cur = await conn.execute(_COMMON_LEXEMES, {"share": share})
        return [str(row[0]) for row in await cur.fetchall()]
