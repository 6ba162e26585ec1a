"""The scale benchmark's queries: the shipped vector half and hybrid query of ``rag`` run the way
``rag.search()`` runs them, under a variant's settings, the brute-force truth, and EXPLAIN of the
slowest."""

from __future__ import annotations

import re
import time
from typing import Any

from psycopg import sql

from bench.scale_samples import Hit, K
from bench.scale_variants import EXACT, HNSW, VectorMode
from bench.synthetic import Query, SyntheticSpec
from rag import BM25_PARAMS, HYBRID_QUERY, RRF_K, VECTOR_QUERY, ScopeHints, Store, search

# Brute force within the tenant (run with index scans off): the ground truth for recall.
_TRUTH = """
SELECT chunk_id
FROM chunks
WHERE tenant_id = %(tenant)s AND NOT superseded AND embedding_dim = {dim}
ORDER BY embedding::vector({dim}) <=> %(embedding)s::vector({dim}), chunk_id
LIMIT %(k)s
"""

_VECTOR_LITERAL = re.compile(r"'\[[-0-9.e,]+\]'")


async def run_vector(
    store: Store, query: Query, mode: VectorMode, *, candidates: int, dim: int
) -> Hit:
    """The shipped vector half (``rag.VECTOR_QUERY``) on its own, as ``rag.search()`` would run
    it: own transaction, the mode's settings, the query."""
    statement = sql.SQL(VECTOR_QUERY).format(dim=sql.Literal(dim))
    params = _hybrid_params(query, candidates)
    started = time.perf_counter()
    async with store.pool.connection() as conn, conn.transaction():
        for name, value in mode.settings:
            await conn.execute("SELECT set_config(%s, %s, true)", (name, value))
        cur = await conn.execute(statement, params)
        rows = await cur.fetchall()
    elapsed = (time.perf_counter() - started) * 1000
    # Ranked by distance as the hybrid query ranks them (relaxed order may emit out of order).
    return Hit(elapsed, [chunk_id for chunk_id, _ in sorted(rows, key=lambda r: (r[1], r[0]))])


async def run_hybrid(store: Store, query: Query, *, exact: bool, candidates: int) -> Hit:
    """``search()`` end to end."""
    started = time.perf_counter()
    found = await search(
        store,
        tenant=query.tenant,
        question=query.question,
        embedding=query.vector,
        model=_model_of(query),
        service=None,
        candidates=candidates,
        hints=ScopeHints(),
        exact=exact,
    )
    elapsed = (time.perf_counter() - started) * 1000
    vector = sorted((e.vector_rank, e.chunk_id) for e in found.evidence if e.vector_rank)
    keyword = sorted(
        (e.keyword_rank, e.chunk_id, e.document_id) for e in found.evidence if e.keyword_rank
    )
    return Hit(
        elapsed,
        [chunk_id for _, chunk_id in vector[:K]],
        [chunk_id for _, chunk_id, _ in keyword[:K]],
        len(found.evidence),
        [document for *_, document in keyword[:K]],
        [e.document_id for e in found.evidence[:K]],
    )


async def run_hybrid_statement(
    store: Store, query: Query, mode: VectorMode, *, candidates: int
) -> Hit:
    """The shipped ``rag.HYBRID_QUERY`` alone, with ``mode``'s session settings, in the tenant's
    row-level-security transaction as ``rag.search()`` runs it."""
    statement = sql.SQL(HYBRID_QUERY).format(dim=sql.Literal(int(query.vector.shape[0])))
    params = _hybrid_params(query, candidates)
    started = time.perf_counter()
    async with store.tenant_reader(query.tenant) as conn:
        await conn.execute("SET LOCAL plan_cache_mode = force_custom_plan")
        for name, value in mode.settings:
            await conn.execute("SELECT set_config(%s, %s, true)", (name, value))
        cur = await conn.execute(statement, params)
        rows = await cur.fetchall()
    elapsed = (time.perf_counter() - started) * 1000
    # Columns as in rag.HYBRID_QUERY: chunk_id, document_id first; the two ranks last.
    vector = sorted((row[-2], row[0]) for row in rows if row[-2] is not None)
    keyword = sorted((row[-1], row[0], row[1]) for row in rows if row[-1] is not None)
    fused = sorted(
        rows,
        key=lambda row: (
            -sum(1.0 / (RRF_K + rank) for rank in (row[-2], row[-1]) if rank is not None),
            row[0],
        ),
    )
    return Hit(
        elapsed,
        [c for _, c in vector[:K]],
        [c for _, c, _ in keyword[:K]],
        len(rows),
        [document for *_, document in keyword[:K]],
        [str(row[1]) for row in fused[:K]],
    )


async def exact_truth(store: Store, query: Query, *, dim: int) -> list[int]:
    statement = sql.SQL(_TRUTH).format(dim=sql.Literal(dim))
    async with store.pool.connection() as conn, conn.transaction():
        await conn.execute("SET LOCAL enable_indexscan = off")
        cur = await conn.execute(
            statement, {"tenant": query.tenant, "embedding": query.vector, "k": K}
        )
        return [row[0] for row in await cur.fetchall()]


async def explain_hybrid(store: Store, query: Query, *, exact: bool, candidates: int) -> list[str]:
    """EXPLAIN (ANALYZE, BUFFERS) of ``rag.HYBRID_QUERY`` with the path's settings."""
    dim = int(query.vector.shape[0])
    statement = sql.SQL("EXPLAIN (ANALYZE, BUFFERS) ") + sql.SQL(HYBRID_QUERY).format(
        dim=sql.Literal(dim)
    )
    params = _hybrid_params(query, candidates)
    # Under the reader role, as search() runs it: row-level security changes the plan (the
    # owner's plan may use indexes the policy keeps out of reach).
    async with store.tenant_reader(query.tenant) as conn:
        await conn.execute("SET LOCAL plan_cache_mode = force_custom_plan")
        for name, value in (EXACT if exact else HNSW).settings:
            await conn.execute("SELECT set_config(%s, %s, true)", (name, value))
        cur = await conn.execute(statement, params)
        rows = await cur.fetchall()
    return [without_vectors(str(row[0])) for row in rows]


def without_vectors(plan_line: str) -> str:
    """A plan line with each vector literal's numbers replaced: they would drown the plan."""
    return _VECTOR_LITERAL.sub("'[query vector]'", plan_line)


def _hybrid_params(query: Query, candidates: int) -> dict[str, Any]:
    """The parameters ``rag.search()`` passes to the shipped query, for one unscoped question."""
    return {
        "tenant": query.tenant,
        "question": query.question,
        "embedding": query.vector,
        "model": _model_of(query),
        "service": None,
        "candidates": candidates,
        "named": None,  # a question that names no alert's runbook
        "named_sections": 0,
        **BM25_PARAMS,
    }


def _model_of(query: Query) -> str:
    """The embedding model id the synthetic corpus stores for vectors like ``query``'s."""
    return SyntheticSpec(chunks=0, tenants=0, dim=int(query.vector.shape[0])).embedding_model
