"""The bounded keyword half of the hybrid query: it scores only the chunks that could reach its
top ``candidates``, and ranks exactly as scoring every chunk with BM25 would."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from psycopg import sql

from rag import Settings, Store, ingest_limits, ingest_path
from rag.retrieval.rank import ScopeHints
from rag.retrieval.retrieve import BM25_PARAMS, HYBRID_QUERY, search
from tests.hash_embedder import HashEmbedder

EMBEDDER = HashEmbedder(dim=32)

# Every chunk of a tenant with its length and which lexemes it holds anywhere / in a heading.
_CHUNK_TERMS = """
SELECT c.chunk_id, length(c.tsv), tsvector_to_array(c.tsv), tsvector_to_array(c.heading_tsv)
FROM chunks AS c
WHERE c.tenant_id = %(tenant)s AND NOT c.superseded
"""
_STATISTICS = """
SELECT t.chunks, t.total_length, q.lexeme, coalesce(s.df, 0)
FROM tenant_text_stats AS t
CROSS JOIN (SELECT DISTINCT lexeme FROM unnest(to_tsvector('english', %(question)s))) AS q
LEFT JOIN term_stats AS s ON s.tenant_id = t.tenant_id AND s.lexeme = q.lexeme
WHERE t.tenant_id = %(tenant)s
"""
# The hybrid query's keyword CTEs, asked how many chunks were fetched (the seed's, then those
# holding an essential term) and how many of them were scored.
_KEYWORD_CTES = HYBRID_QUERY[: HYBRID_QUERY.index("named_hits AS (")].rstrip(",\n ")
_COUNT_SCORED = """
SELECT (SELECT count(*) FROM seed_scored)
       + (SELECT count(*)
          FROM essential_terms, keyword_query, late_length,
               tenant_chunks_matching(%(tenant)s, essential_terms.q, {dim}, %(model)s, NULL,
                                      keyword_query.seed, late_length.max_length)),
       (SELECT count(*) FROM seed_scored) + (SELECT count(*) FROM keyword_late)
"""
_ROWS_SCORED = "".join((_KEYWORD_CTES, _COUNT_SCORED))


async def _ingest(store: Store, settings: Settings, root: Path, tenant: str) -> None:
    """28 chunks hold "pod" and "restart"; 4 also "quokka" (in the title), 3 "zanzibar"."""
    for i in range(21):
        filler = " ".join(f"step{j}" for j in range(i % 5))
        (root / f"pods{i}.md").write_text(
            f"# Pod restarts {i}\n\n## Diagnosis\n\nThe pod restarts; check the pod events. "
            f"{filler}\n"
        )
    for i in range(4):
        filler = " ".join(f"step{j}" for j in range(i))
        (root / f"quokka{i}.md").write_text(
            f"# Quokka gateway {i}\n\n## Mitigation\n\nRestart the gateway pod. {filler}\n"
        )
    for i in range(3):
        filler = " ".join(f"step{j}" for j in range(i))
        (root / f"zanzibar{i}.md").write_text(
            f"# Queue {i}\n\n## Mitigation\n\nRestart the zanzibar worker pod. {filler}\n"
        )
    await ingest_path(
        store, EMBEDDER, root, tenant=tenant, prune=False, limits=ingest_limits(settings)
    )


async def _full_bm25_ranking(
    store: Store, tenant: str, question: str, k: int
) -> list[tuple[int, float]]:
    """Score every chunk of the tenant in Python, by the formula the query documents."""
    params = {"tenant": tenant, "question": question}
    async with store.pool.connection() as conn:
        cur = await conn.execute(_CHUNK_TERMS, params)
        chunks = await cur.fetchall()
        cur = await conn.execute(_STATISTICS, params)
        statistics = await cur.fetchall()
    n, total_length = statistics[0][0], statistics[0][1]
    average = max(total_length / max(n, 1), 1.0)
    idf = {
        lexeme: math.log(1 + (n - df + 0.5) / (df + 0.5))
        for _, _, lexeme, df in statistics
        if df > 0
    }
    k1, b, heading = BM25_PARAMS["k1"], BM25_PARAMS["b"], BM25_PARAMS["heading_weight"]
    scored = []
    for chunk_id, length, anywhere, in_heading in chunks:
        matched = [lexeme for lexeme in idf if lexeme in anywhere]
        if matched:
            factor = (k1 + 1) / (1 + k1 * (1 - b + b * length / average))
            total = sum(idf[t] * (1 + heading * (t in in_heading)) for t in matched)
            scored.append((chunk_id, factor * total))
    return sorted(scored, key=lambda row: (-row[1], row[0]))[:k]


async def _keyword_ranking(
    store: Store, tenant: str, question: str, k: int
) -> list[tuple[int, float]]:
    found = await search(
        store,
        tenant=tenant,
        question=question,
        embedding=(await EMBEDDER.embed([question]))[0],
        model=EMBEDDER.model_id,
        service=None,
        candidates=k,
        hints=ScopeHints(),
        exact=True,
    )
    ranked = sorted((e.keyword_rank, e.chunk_id, e.bm25) for e in found.evidence if e.keyword_rank)
    return [(chunk_id, bm25) for _, chunk_id, bm25 in ranked]


async def _rows_scored(store: Store, tenant: str, question: str, k: int) -> tuple[int, int]:
    query = sql.SQL(_ROWS_SCORED).format(dim=sql.Literal(EMBEDDER.dim))
    params = {
        "tenant": tenant,
        "question": question,
        "embedding": (await EMBEDDER.embed([question]))[0],
        "model": EMBEDDER.model_id,
        "service": None,
        "candidates": k,
        **BM25_PARAMS,
    }
    async with store.tenant_reader(tenant) as conn:
        cur = await conn.execute(query, params)
        row = await cur.fetchone()
    assert row is not None
    return int(row[0]), int(row[1])


@pytest.mark.parametrize(
    ("question", "k"),
    [
        ("quokka pod restart", 3),  # the seed's bar prunes every chunk without "quokka"
        ("zanzibar quokka pod", 2),  # seed "zanzibar": the others are fetched and scored late
        ("pod restarts", 5),  # only common terms: the seed is every chunk
        ("quokka zanzibar", 40),  # fewer matches than candidates: no bar, all scored
    ],
)
async def test_bounded_keyword_half_ranks_exactly_as_scoring_every_chunk(
    store: Store, settings: Settings, tmp_path: Path, unique_tenant: str, question: str, k: int
) -> None:
    await _ingest(store, settings, tmp_path, unique_tenant)
    bounded = await _keyword_ranking(store, unique_tenant, question, k)
    full = await _full_bm25_ranking(store, unique_tenant, question, k)
    assert [chunk_id for chunk_id, _ in bounded] == [chunk_id for chunk_id, _ in full]
    assert [score for _, score in bounded] == pytest.approx([score for _, score in full])


async def test_keyword_half_fetches_only_chunks_that_can_reach_its_top_candidates(
    store: Store, settings: Settings, tmp_path: Path, unique_tenant: str
) -> None:
    await _ingest(store, settings, tmp_path, unique_tenant)
    # 28 chunks hold "pod" or "restart", but only the 4 "quokka" chunks (the seed) are fetched:
    # "pod" and "restart" are in every chunk, too light to lift one without "quokka" to the bar.
    fetched, scored = await _rows_scored(store, unique_tenant, "quokka pod restart", 3)
    assert (fetched, scored) == (4, 4)
    # The seed is the rarer "zanzibar" (3 chunks); "quokka", left out of it, is heavy enough to
    # lift a chunk above the bar, so its 4 chunks are fetched and scored too; "pod" is not.
    fetched, scored = await _rows_scored(store, unique_tenant, "zanzibar quokka pod", 2)
    assert (fetched, scored) == (7, 7)
