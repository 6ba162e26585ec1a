"""``runbook bench scale``: tenant-filtered retrieval on a synthetic store of up to 1M chunks.

Per tenant-size bucket it times the vector search and the full hybrid ``search()`` on both paths
(exact tenant scan, HNSW iterative scan), scores filtered recall@10 against brute force within the
tenant, counts short results, and reports the path the service picks (exact unless the tenant
has a partition of its own and more than ``exact_search_max_chunks`` chunks). Query embedding is
excluded: the queries carry synthetic vectors. Loading may run on a busy machine; measuring
starts only on a quiet one and is reported invalid if it did not stay so (``bench/quiet.py``).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.quiet import QuietRules, QuietWatch, benchmark_roots
from bench.results_file import machine_facts, write_result
from bench.scale_measure import measure_scale
from bench.scale_report import corpus_description, server_facts
from bench.scale_variants import VARIANTS
from bench.store_layout import chunk_storage
from bench.synthetic import SyntheticCorpus, SyntheticSpec
from bench.synthetic_store import (
    loaded_store,
    size_label,
)
from rag import (
    CANDIDATES_PER_RETRIEVER,
    ConfigurationError,
    Settings,
    resolve_database_url,
)


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
    rules: QuietRules,
    load_only: bool = False,
) -> int:
    """Load the store unless it holds this spec already, then measure (unless ``load_only``);
    exit status 1 when the machine was busy while measuring."""
    unknown = sorted(set(variants) - set(VARIANTS))
    if unknown:
        raise ConfigurationError(
            f"unknown benchmark variant {unknown[0]!r}; known: {', '.join(VARIANTS)}"
        )
    spec = SyntheticSpec(chunks=chunks, tenants=tenants, seed=seed)
    corpus = SyntheticCorpus(spec)
    name = f"scale-{size_label(chunks)}" + ("" if tenants == 1000 else f"-{tenants}t")
    database = "runbook_bench_" + name.replace("-", "_")
    base_url = await resolve_database_url(settings)
    async with loaded_store(settings, base_url, database, corpus, rebuild=rebuild) as loaded:
        store, fingerprint, load = loaded.store, loaded.fingerprint, loaded.load
        if load_only:
            print(json.dumps({"database": database, "spec": fingerprint, "load": load}, indent=2))
            return 0
        watch = QuietWatch(rules, roots=await benchmark_roots(store))
        await watch.start()
        measured = await measure_scale(
            store,
            corpus,
            queries_per_bucket=queries,
            warmup=warmup,
            exact_max=settings.exact_search_max_chunks,
            variants=variants,
        )
        verdict = await watch.verdict()
        result: dict[str, Any] = {
            "benchmark": "scale",
            **verdict,
            "machine": {**await machine_facts(store), "server": await server_facts(store)},
            "spec": fingerprint,
            "vectors": corpus_description(),
            "exact_search_max_chunks": settings.exact_search_max_chunks,
            "partition_min_chunks": settings.partition_min_chunks,
            "candidates_per_retriever": CANDIDATES_PER_RETRIEVER,
            "load": {**load, "reused_existing_database": loaded.reused},
            "storage": await chunk_storage(store, spec.chunks),
            **measured,
        }
    print(await asyncio.to_thread(write_result, output, name, result))
    return 0 if result["valid"] else 1
