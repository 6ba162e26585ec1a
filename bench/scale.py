"""``runbook bench scale``: tenant-filtered retrieval on a synthetic store of up to 1M chunks.

Per tenant-size bucket it times the vector search and the full hybrid ``search()`` on both paths
(exact tenant scan, HNSW iterative scan), scores filtered recall@10 against brute force within the
tenant, counts short results, and reports what the service's ``exact_search_max_chunks`` rule
picks. Query embedding is excluded: the queries carry synthetic vectors.
"""

from __future__ import annotations

import asyncio
import os
import re
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
from psycopg import sql
from pydantic import SecretStr

from rag.bench_results import machine_facts, write_result
from rag.bench_synthetic import (
    Query,
    SyntheticCorpus,
    SyntheticSpec,
    load_corpus,
    mark_database,
    prepare_database,
    relation_sizes,
    size_label,
)
from rag.errors import ConfigurationError
from rag.rank import RRF_K, ScopeHints
from rag.retrieve import _HYBRID, BM25_PARAMS, search
from rag.runtime import open_store
from rag.service import _CANDIDATES_PER_RETRIEVER
from rag.settings import Settings
from rag.store import Store, resolve_database_url

BUCKETS = ("small", "medium", "large")
K = 10

# The vector half of retrieve._HYBRID on its own, to time the vector search without fusion.
_VECTOR = """
SELECT chunk_id, embedding::vector({dim}) <=> %(embedding)s::vector({dim}) AS distance
FROM chunks
WHERE tenant_id = %(tenant)s AND NOT superseded AND embedding_dim = {dim}
  AND (%(service)s::text IS NULL OR service = %(service)s::text)
ORDER BY embedding::vector({dim}) <=> %(embedding)s::vector({dim})
LIMIT %(candidates)s
"""
# Brute force within the tenant (run with index scans off): the ground truth for recall.
_TRUTH = """
SELECT chunk_id
FROM chunks
WHERE tenant_id = %(tenant)s AND NOT superseded AND embedding_dim = {dim}
ORDER BY embedding::vector({dim}) <=> %(embedding)s::vector({dim}), chunk_id
LIMIT %(k)s
"""


_VECTOR_LITERAL = re.compile(r"'\[[-0-9.e,]+\]'")


@dataclass(frozen=True)
class VectorMode:
    """Session settings for one way of running the vector query (``SET LOCAL`` each)."""

    name: str
    exact: bool
    settings: tuple[tuple[str, str], ...]


# What retrieve.search() sets on each path (ef_search = max(100, candidates)).
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

# Labelled alternatives to retrieve._HYBRID's keyword half, each a text edit of the shipped SQL.
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
    """Text edits of retrieve._HYBRID, and optionally a statement that builds %(tsquery)s."""

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
    """retrieve._HYBRID with the variant's edits, or None when the shipped SQL no longer matches."""
    text = _HYBRID
    for old, new in HYBRID_VARIANTS[name].edits:
        if old not in text:
            return None
        text = text.replace(old, new)
    return text


@dataclass(frozen=True)
class Hit:
    """One query's answer from one way of searching."""

    ms: float
    vector_ids: list[int]
    keyword_ids: list[int] = field(default_factory=list)
    rows: int = 0  # rows the hybrid query returned (vector and keyword hits fused)
    keyword_documents: list[str] = field(default_factory=list)  # top 10 by keyword rank
    fused_documents: list[str] = field(default_factory=list)  # top 10 after RRF


@dataclass
class Samples:
    """Per-query measurements for one bucket and one way of searching."""

    vector_ms: list[float] = field(default_factory=list)
    hybrid_ms: list[float] = field(default_factory=list)
    recall: list[float] = field(default_factory=list)
    hybrid_recall: list[float] = field(default_factory=list)
    keyword_overlap: list[float] = field(default_factory=list)
    keyword_precision: list[float] = field(default_factory=list)
    fused_precision: list[float] = field(default_factory=list)
    short_vector: int = 0
    short_hybrid_vector: int = 0
    short_results: int = 0

    def add_vector(self, hit: Hit, truth: Sequence[int], expected: int) -> None:
        self.vector_ms.append(hit.ms)
        self.recall.append(recall_at_k(hit.vector_ids, truth))
        self.short_vector += len(hit.vector_ids[:K]) < expected

    def add_hybrid(self, hit: Hit, truth: Sequence[int], expected: int, query: Query) -> None:
        self.hybrid_ms.append(hit.ms)
        self.hybrid_recall.append(recall_at_k(hit.vector_ids, truth))
        self.short_hybrid_vector += len(hit.vector_ids) < expected
        self.short_results += hit.rows < expected
        for documents, into in (
            (hit.keyword_documents, self.keyword_precision),
            (hit.fused_documents, self.fused_precision),
        ):
            if documents:
                into.append(sum(map(query.on_topic, documents)) / len(documents))

    def summary(self) -> dict[str, Any]:
        found: dict[str, Any] = {}
        if self.vector_ms:
            found["vector_ms"] = percentiles(self.vector_ms)
            found["recall_at_10"] = _mean(self.recall)
            found["short_vector"] = self.short_vector
        if self.hybrid_ms:
            found["hybrid_ms"] = percentiles(self.hybrid_ms)
            found["hybrid_recall_at_10"] = _mean(self.hybrid_recall)
            found["short_hybrid_vector"] = self.short_hybrid_vector
            found["short_results"] = self.short_results
        if self.keyword_precision:
            found["keyword_on_topic_at_10"] = _mean(self.keyword_precision)
        if self.fused_precision:
            found["fused_on_topic_at_10"] = _mean(self.fused_precision)
        if self.keyword_overlap:
            found["keyword_top10_overlap_with_shipped"] = _mean(self.keyword_overlap)
        return found


def _mean(values: Sequence[float]) -> float:
    return round(float(np.mean(values)), 4)


def percentiles(values: Sequence[float]) -> dict[str, float]:
    p50, p95, p99 = np.percentile(np.asarray(values, dtype=np.float64), [50, 95, 99])
    return {"p50": round(float(p50), 2), "p95": round(float(p95), 2), "p99": round(float(p99), 2)}


def bucket_ranks(sizes: Sequence[int], exact_max: int) -> dict[str, range]:
    """Tenant ranks (0 = largest) per bucket, each 1% of the tenants: the smallest, a slice from
    the 5% rank, the largest, and, when some tenants exceed ``exact_max``, the largest tenants
    at or under it (where the service's exact path is at its slowest)."""
    tenants = len(sizes)
    width = max(1, tenants // 100)
    medium = min(max(width, tenants // 20), tenants - 2 * width)
    found = {
        "small": range(tenants - width, tenants),
        "medium": range(medium, medium + width),
        "large": range(0, width),
    }
    first_exact = next((rank for rank, size in enumerate(sizes) if size <= exact_max), tenants)
    if width <= first_exact < medium:
        found["under_threshold"] = range(first_exact, min(first_exact + width, medium))
    order = ("small", "medium", "under_threshold", "large")
    return {name: found[name] for name in order if name in found}


def bucket_queries(corpus: SyntheticCorpus, ranks: range, count: int, stream: int) -> list[Query]:
    """``count`` queries spread round-robin over the bucket's tenants."""
    per_tenant = [
        count // len(ranks) + (1 if i < count % len(ranks) else 0) for i in range(len(ranks))
    ]
    found: list[Query] = []
    for rank, n in zip(ranks, per_tenant, strict=True):
        if n:
            found.extend(corpus.queries(rank, n, stream=stream))
    return found


async def run_vector(
    store: Store, query: Query, mode: VectorMode, *, candidates: int, dim: int
) -> Hit:
    """One vector query as retrieve.search() would run it: own transaction, SET LOCALs, query."""
    statement = sql.SQL(_VECTOR).format(dim=sql.Literal(dim))
    params = {
        "tenant": query.tenant,
        "embedding": query.vector,
        "service": None,
        "candidates": candidates,
    }
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


async def run_hybrid_sql(
    store: Store,
    query: Query,
    text: str,
    *,
    prepare: str | None,
    exact: bool,
    candidates: int,
    common: list[str],
) -> Hit:
    """A variant of retrieve._HYBRID, run the way search() runs the shipped one."""
    statement = sql.SQL(text).format(dim=sql.Literal(int(query.vector.shape[0])))
    params = {
        "tenant": query.tenant,
        "question": query.question,
        "embedding": query.vector,
        "model": _model_of(query),
        **BM25_PARAMS,
        "service": None,
        "candidates": candidates,
        "common": common,
    }
    started = time.perf_counter()
    async with store.pool.connection() as conn, conn.transaction():
        for name, value in (EXACT if exact else HNSW).settings:
            await conn.execute("SELECT set_config(%s, %s, true)", (name, value))
        if prepare is not None:
            cur = await conn.execute(prepare, params)
            built = await cur.fetchone()
            params["tsquery"] = built[0] if built else None
        cur = await conn.execute(statement, params)
        rows = await cur.fetchall()
    elapsed = (time.perf_counter() - started) * 1000
    # Columns as in retrieve._HYBRID: chunk_id, document_id first; the two ranks last.
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


async def common_lexemes(store: Store, share: float) -> list[str]:
    async with store.pool.connection() as conn:
        cur = await conn.execute(_COMMON_LEXEMES, {"share": share})
        return [str(row[0]) for row in await cur.fetchall()]


async def exact_truth(store: Store, query: Query, *, dim: int) -> list[int]:
    statement = sql.SQL(_TRUTH).format(dim=sql.Literal(dim))
    async with store.pool.connection() as conn, conn.transaction():
        await conn.execute("SET LOCAL enable_indexscan = off")
        cur = await conn.execute(
            statement, {"tenant": query.tenant, "embedding": query.vector, "k": K}
        )
        return [row[0] for row in await cur.fetchall()]


def recall_at_k(found: Sequence[int | str], truth: Sequence[int | str]) -> float:
    if not truth:
        return 1.0
    return len(set(found[:K]) & set(truth)) / len(truth)


async def explain_hybrid(store: Store, query: Query, *, exact: bool, candidates: int) -> list[str]:
    """EXPLAIN (ANALYZE, BUFFERS) of retrieve._HYBRID with the path's settings."""
    dim = int(query.vector.shape[0])
    statement = sql.SQL("EXPLAIN (ANALYZE, BUFFERS) ") + sql.SQL(_HYBRID).format(
        dim=sql.Literal(dim)
    )
    params = {
        "tenant": query.tenant,
        "question": query.question,
        "embedding": query.vector,
        "model": _model_of(query),
        **BM25_PARAMS,
        "service": None,
        "candidates": candidates,
    }
    async with store.pool.connection() as conn, conn.transaction():
        for name, value in (EXACT if exact else HNSW).settings:
            await conn.execute("SELECT set_config(%s, %s, true)", (name, value))
        cur = await conn.execute(statement, params)
        rows = await cur.fetchall()
    return [without_vectors(str(row[0])) for row in rows]


def without_vectors(plan_line: str) -> str:
    """A plan line with each vector literal's numbers replaced: they would drown the plan."""
    return _VECTOR_LITERAL.sub("'[query vector]'", plan_line)


async def measure_scale(
    store: Store,
    corpus: SyntheticCorpus,
    *,
    queries_per_bucket: int,
    warmup: int,
    exact_max: int,
    candidates: int = _CANDIDATES_PER_RETRIEVER,
    variants: Sequence[str] = (),
) -> dict[str, Any]:
    """Every bucket's figures; the store must already hold ``corpus``.

    Each query runs every way of searching once, in a shuffled order, so no way of searching
    always finds the tenant's pages warmed by another.
    """
    dim = corpus.spec.dim
    modes = [EXACT, HNSW, *(VARIANTS[name] for name in variants if name in VARIANTS)]
    texts = {
        name: (text, HYBRID_VARIANTS[name])
        for name in variants
        if name in HYBRID_VARIANTS and (text := hybrid_variant_sql(name)) is not None
    }
    common = {
        share: await common_lexemes(store, share)
        for share in sorted({0.10, *(variant.common_share for _, variant in texts.values())})
    }
    buckets: dict[str, Any] = {}
    slowest: dict[str, tuple[float, Query]] = {}
    by_size: list[tuple[int, float, float]] = []  # tenant chunks, exact and HNSW vector ms

    def runs_for(query: Query) -> dict[str, Callable[[], Awaitable[Hit]]]:
        rule_exact = query.tenant_chunks <= exact_max
        found: dict[str, Callable[[], Awaitable[Hit]]] = {}
        for mode in modes:
            found[f"vector:{mode.name}"] = partial(
                run_vector, store, query, mode, candidates=candidates, dim=dim
            )
        for path, exact in (("exact", True), ("hnsw", False)):
            found[f"hybrid:{path}"] = partial(
                run_hybrid, store, query, exact=exact, candidates=candidates
            )
        for name, (text, variant) in texts.items():
            found[f"keyword:{name}"] = partial(
                run_hybrid_sql,
                store,
                query,
                text,
                prepare=variant.prepare,
                exact=rule_exact,
                candidates=candidates,
                common=common[variant.common_share],
            )
        return found

    for bucket, ranks in bucket_ranks(corpus.sizes, exact_max).items():
        for query in bucket_queries(corpus, ranks, warmup, stream=2):
            for run in runs_for(query).values():
                await run()
        samples = {name: Samples() for name in (*(m.name for m in modes), *texts)}
        rule = Samples()
        picked = {"exact": 0, "hnsw": 0}
        queries = bucket_queries(corpus, ranks, queries_per_bucket, stream=1)
        for number, query in enumerate(queries):
            truth = await exact_truth(store, query, dim=dim)
            expected = min(K, query.tenant_chunks)
            runs = runs_for(query)
            labels = list(runs)
            hits: dict[str, Hit] = {}
            for index in np.random.default_rng([number, len(labels)]).permutation(len(labels)):
                hits[labels[index]] = await runs[labels[index]]()
            for mode in modes:
                samples[mode.name].add_vector(hits[f"vector:{mode.name}"], truth, expected)
            for path in ("exact", "hnsw"):
                hit = hits[f"hybrid:{path}"]
                samples[path].add_hybrid(hit, truth, expected, query)
                if hit.ms > slowest.get(path, (0.0, query))[0]:
                    slowest[path] = (hit.ms, query)
            by_size.append((query.tenant_chunks, hits["vector:exact"].ms, hits["vector:hnsw"].ms))
            path = "exact" if query.tenant_chunks <= exact_max else "hnsw"
            picked[path] += 1
            rule.add_vector(hits[f"vector:{path}"], truth, expected)
            rule.add_hybrid(hits[f"hybrid:{path}"], truth, expected, query)
            shipped = hits[f"hybrid:{path}"].keyword_ids
            for name in texts:
                hit = hits[f"keyword:{name}"]
                samples[name].add_hybrid(hit, truth, expected, query)
                samples[name].keyword_overlap.append(
                    len(set(hit.keyword_ids) & set(shipped)) / len(shipped) if shipped else 1.0
                )
        sizes = [corpus.sizes[rank] for rank in ranks]
        buckets[bucket] = {
            "tenants": len(ranks),
            "tenant_chunks": {"min": min(sizes), "max": max(sizes)},
            "queries": len(queries),
            "exact": samples["exact"].summary(),
            "hnsw": samples["hnsw"].summary(),
            "service_rule": {"picked": picked, **rule.summary()},
            "variants": {
                name: record.summary()
                for name, record in samples.items()
                if name not in ("exact", "hnsw")
            },
        }
    explain = {
        path: {
            "tenant": query.tenant,
            "tenant_chunks": query.tenant_chunks,
            "measured_ms": round(ms, 2),
            "plan": await explain_hybrid(
                store, query, exact=path == "exact", candidates=candidates
            ),
        }
        for path, (ms, query) in slowest.items()
    }
    return {
        "buckets": buckets,
        "targets": scale_targets(buckets),
        "threshold": exact_threshold(by_size, buckets, exact_max),
        "common_lexemes": {
            f"in_over_{share:.0%}_of_chunks": found for share, found in common.items()
        },
        "explain_slowest_hybrid": explain,
        "sizes": await relation_sizes(store, dim),
    }


def exact_threshold(
    by_size: Sequence[tuple[int, float, float]], buckets: dict[str, Any], exact_max: int
) -> dict[str, Any]:
    """Where the exact tenant scan stops paying: a straight-line fit of its vector-query time
    over tenant size, against the HNSW path's median on the largest tenants."""
    sizes = np.asarray([size for size, _, _ in by_size], dtype=np.float64)
    exact = np.asarray([ms for _, ms, _ in by_size], dtype=np.float64)
    if len(set(sizes.tolist())) < 2:
        return {"exact_search_max_chunks": exact_max}
    slope, intercept = np.polyfit(sizes, exact, 1)
    hnsw_large = buckets["large"]["hnsw"]["vector_ms"]["p50"]
    crossover = (hnsw_large - intercept) / slope if slope > 0 else None
    return {
        "exact_search_max_chunks": exact_max,
        "exact_vector_ms_fit": {
            "intercept_ms": round(float(intercept), 2),
            "ms_per_1000_chunks": round(float(slope) * 1000, 3),
        },
        "hnsw_vector_ms_p50_large_bucket": hnsw_large,
        "exact_as_fast_as_hnsw_up_to_chunks": None if crossover is None else int(crossover),
    }


def scale_targets(buckets: dict[str, Any]) -> dict[str, Any]:
    """The issue's targets, judged on what the service's rule picks in each bucket."""
    rule = {name: bucket["service_rule"] for name, bucket in buckets.items()}
    recall = {name: (r["recall_at_10"] or 0.0) >= 0.99 for name, r in rule.items()}
    short = {
        name: r["short_vector"] == 0 and r["short_hybrid_vector"] == 0 and r["short_results"] == 0
        for name, r in rule.items()
    }
    p95 = {name: r["hybrid_ms"]["p95"] <= 50.0 for name, r in rule.items()}
    return {
        "recall_at_10_ge_0_99": {**recall, "all": all(recall.values())},
        "never_short_when_tenant_has_10": {**short, "all": all(short.values())},
        "hybrid_p95_le_50ms": {**p95, "all": all(p95.values())},
    }


async def server_facts(store: Store) -> dict[str, Any]:
    names = ("shared_buffers", "work_mem", "effective_cache_size", "jit", "max_parallel_workers")
    async with store.pool.connection() as conn:
        facts: dict[str, Any] = {}
        for name in names:
            cur = await conn.execute("SELECT current_setting(%s)", (name,))
            row = await cur.fetchone()
            facts[name] = row[0] if row else None
    return facts


async def run_scale_benchmark(
    settings: Settings,
    *,
    chunks: int,
    tenants: int,
    queries: int,
    warmup: int,
    seed: int,
    rebuild: bool,
    variants: Sequence[str],
    output: Path,
) -> int:
    unknown = sorted(set(variants) - set(VARIANTS) - set(HYBRID_VARIANTS))
    if unknown:
        known = ", ".join([*VARIANTS, *HYBRID_VARIANTS])
        raise ConfigurationError(f"unknown benchmark variant {unknown[0]!r}; known: {known}")
    spec = SyntheticSpec(chunks=chunks, tenants=tenants, seed=seed)
    corpus = SyntheticCorpus(spec)
    name = f"scale-{size_label(chunks)}" + ("" if tenants == 1000 else f"-{tenants}t")
    database = "runbook_bench_" + name.replace("-", "_")
    base_url = await resolve_database_url(settings)
    conninfo, marker = await prepare_database(base_url, database, spec.as_json(), rebuild=rebuild)
    bench_settings = settings.model_copy(update={"database_url": SecretStr(conninfo)})
    async with open_store(bench_settings) as store:
        if marker is None:
            load = await load_corpus(store, corpus, conninfo=conninfo, bulk=True)
            await mark_database(base_url, database, {"spec": spec.as_json(), "load": load})
        else:
            load = marker["load"]
        load_average = [os.getloadavg()]
        measured = await measure_scale(
            store,
            corpus,
            queries_per_bucket=queries,
            warmup=warmup,
            exact_max=settings.exact_search_max_chunks,
            variants=variants,
        )
        load_average.append(os.getloadavg())
        result: dict[str, Any] = {
            "benchmark": "scale",
            "machine": {
                **await machine_facts(store),
                "server": await server_facts(store),
                "load_average_before_after": [[round(v, 2) for v in la] for la in load_average],
            },
            "spec": spec.as_json(),
            "vectors": corpus_description(),
            "exact_search_max_chunks": settings.exact_search_max_chunks,
            "candidates_per_retriever": _CANDIDATES_PER_RETRIEVER,
            "load": {**load, "reused_existing_database": marker is not None},
            **measured,
        }
    print(await asyncio.to_thread(write_result, output, name, result))
    return 0


def corpus_description() -> str:
    from rag import bench_synthetic as synthetic

    return (
        "unit vectors: shared global topic directions (numpy, fixed seed); each tenant takes a "
        f"Zipf-popular subset and offsets each by {synthetic.TENANT_OFFSET}× a random unit "
        f"vector; chunks add Gaussian noise of norm ≈{synthetic.CHUNK_NOISE}, queries "
        f"≈{synthetic.QUERY_NOISE} around one of the tenant's topic centres; all normalised"
    )


def _model_of(query: Query) -> str:
    """The embedding model id the synthetic corpus stores for vectors like ``query``'s."""
    return SyntheticSpec(chunks=0, tenants=0, dim=int(query.vector.shape[0])).embedding_model
