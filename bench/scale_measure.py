"""The scale benchmark's measurement: per tenant-size bucket, every way of searching on the same
queries in a shuffled order, and the service's own choice of path."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from functools import partial
from typing import Any

import numpy as np

from bench.scale_queries import (
    exact_truth,
    explain_hybrid,
    run_hybrid,
    run_hybrid_statement,
    run_vector,
)
from bench.scale_report import exact_threshold, scale_targets
from bench.scale_samples import Hit, K, Samples
from bench.scale_variants import EXACT, HNSW, VARIANTS
from bench.store_layout import own_partition_tenants, service_scans_exactly
from bench.synthetic import Query, SyntheticCorpus
from rag import CANDIDATES_PER_RETRIEVER, Store

BUCKETS = ("small", "medium", "large")


def bucket_ranks(sizes: Sequence[int], scanned_exactly: Sequence[bool]) -> dict[str, range]:
    """Tenant ranks (0 = largest) per bucket, each 1% of the tenants: the smallest, a slice from
    the 5% rank, the largest, and, when the service scans some but not all tenants exactly, the
    largest of those it scans exactly (where its exact path is at its slowest)."""
    tenants = len(sizes)
    width = max(1, tenants // 100)
    medium = min(max(width, tenants // 20), tenants - 2 * width)
    found = {
        "small": range(tenants - width, tenants),
        "medium": range(medium, medium + width),
        "large": range(0, width),
    }
    first_exact = next((rank for rank, exact in enumerate(scanned_exactly) if exact), tenants)
    taken = {rank for ranks in found.values() for rank in ranks}
    largest_exact = [
        r for r in range(first_exact, min(first_exact + width, tenants)) if r not in taken
    ]
    if first_exact >= width and largest_exact:
        found["under_threshold"] = range(largest_exact[0], largest_exact[-1] + 1)
    # Smallest tenants first.
    return dict(sorted(found.items(), key=lambda item: -item[1].start))


def exact_flags(corpus: SyntheticCorpus, own: frozenset[str], exact_max: int) -> list[bool]:
    """Per tenant rank: whether the service scans that tenant exactly."""
    return [
        service_scans_exactly(corpus.spec.tenant_id(rank), size, own=own, exact_max=exact_max)
        for rank, size in enumerate(corpus.sizes)
    ]


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


async def measure_scale(
    store: Store,
    corpus: SyntheticCorpus,
    *,
    queries_per_bucket: int,
    warmup: int,
    exact_max: int,
    candidates: int = CANDIDATES_PER_RETRIEVER,
    variants: Sequence[str] = (),
) -> dict[str, Any]:
    """Every bucket's figures; the store must already hold ``corpus``.

    Each query runs every way of searching once, in a shuffled order, so no way of searching
    always finds the tenant's pages warmed by another.
    """
    dim = corpus.spec.dim
    chosen = [VARIANTS[name] for name in variants]
    own = await own_partition_tenants(store)

    def rule_exact(query: Query) -> bool:
        return service_scans_exactly(
            query.tenant, query.tenant_chunks, own=own, exact_max=exact_max
        )

    buckets: dict[str, Any] = {}
    slowest: dict[str, tuple[float, Query]] = {}
    by_size: list[tuple[int, float, float]] = []  # tenant chunks, exact and HNSW vector ms

    def runs_for(query: Query) -> dict[str, Callable[[], Awaitable[Hit]]]:
        found: dict[str, Callable[[], Awaitable[Hit]]] = {}
        for mode in (EXACT, HNSW):
            found[f"vector:{mode.name}"] = partial(
                run_vector, store, query, mode, candidates=candidates, dim=dim
            )
            found[f"hybrid:{mode.name}"] = partial(
                run_hybrid, store, query, exact=mode.exact, candidates=candidates
            )
        for variant in chosen:
            mode = variant.mode(rule_exact=rule_exact(query))
            found[f"vector:{variant.name}"] = partial(
                run_vector, store, query, mode, candidates=candidates, dim=dim
            )
            found[f"statement:{variant.name}"] = partial(
                run_hybrid_statement, store, query, mode, candidates=candidates
            )
        return found

    for bucket, ranks in bucket_ranks(corpus.sizes, exact_flags(corpus, own, exact_max)).items():
        for query in bucket_queries(corpus, ranks, warmup, stream=2):
            for run in runs_for(query).values():
                await run()
        samples = {name: Samples() for name in ("exact", "hnsw", *(v.name for v in chosen))}
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
            for path in ("exact", "hnsw"):
                samples[path].add_vector(hits[f"vector:{path}"], truth, expected)
                hit = hits[f"hybrid:{path}"]
                samples[path].add_hybrid(hit, truth, expected, query)
                if hit.ms > slowest.get(path, (0.0, query))[0]:
                    slowest[path] = (hit.ms, query)
            by_size.append((query.tenant_chunks, hits["vector:exact"].ms, hits["vector:hnsw"].ms))
            path = "exact" if rule_exact(query) else "hnsw"
            picked[path] += 1
            rule.add_vector(hits[f"vector:{path}"], truth, expected)
            rule.add_hybrid(hits[f"hybrid:{path}"], truth, expected, query)
            shipped = hits[f"hybrid:{path}"].keyword_ids
            for variant in chosen:
                samples[variant.name].add_vector(hits[f"vector:{variant.name}"], truth, expected)
                hit = hits[f"statement:{variant.name}"]
                samples[variant.name].add_hybrid(hit, truth, expected, query)
                samples[variant.name].keyword_overlap.append(
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
        "variants": {
            v.name: {"path": v.path or "service rule", "settings": dict(v.extra)} for v in chosen
        },
        "explain_slowest_hybrid": explain,
    }
