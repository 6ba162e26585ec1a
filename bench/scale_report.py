"""The scale benchmark's verdicts and context: the issue's targets, where the exact path stops
paying, the server's settings and how the synthetic vectors are made."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from bench import synthetic
from rag import Store


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


def corpus_description() -> str:
    return (
        "unit vectors: shared global topic directions (numpy, fixed seed); each tenant takes a "
        f"Zipf-popular subset and offsets each by {synthetic.TENANT_OFFSET}× a random unit "
        f"vector; chunks add Gaussian noise of norm ≈{synthetic.CHUNK_NOISE}, queries "
        f"≈{synthetic.QUERY_NOISE} around one of the tenant's topic centres; all normalised"
    )
