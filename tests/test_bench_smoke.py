"""The scale benchmark end to end on a tiny synthetic store: result shape and sanity, no timings.

It loads 2,000 synthetic chunks over 20 tenants of its own into the session's database (COPY,
secondary indexes left in place, the larger tenants rebalanced into partitions of their own),
measures every bucket and removes its tenants and their partitions again.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path

from bench.results_file import write_result
from bench.scale_measure import BUCKETS, measure_scale
from bench.store_layout import chunk_storage
from bench.synthetic import SyntheticCorpus, SyntheticSpec, tenant_sizes
from bench.synthetic_store import load_corpus, store_fingerprint
from rag import Settings, Store, rebalance

# Tenants above this many chunks get a partition of their own after the load.
_OWN_PARTITION_ABOVE = 60


def test_synthetic_tenant_sizes_are_zipf_shaped_and_add_up() -> None:
    spec = SyntheticSpec(chunks=1_000_000, tenants=1000)
    sizes = tenant_sizes(spec)
    assert sum(sizes) == spec.chunks and len(sizes) == spec.tenants
    assert sizes == sorted(sizes, reverse=True)
    assert 10_000 <= sizes[0] <= 100_000  # the largest: tens of thousands
    assert 20 <= sizes[-1] <= 60  # the smallest: a few dozen


def test_synthetic_tenants_are_generated_the_same_every_time() -> None:
    first = SyntheticCorpus(SyntheticSpec(chunks=2_000, tenants=20)).tenant_rows(3)
    again = SyntheticCorpus(SyntheticSpec(chunks=2_000, tenants=20)).tenant_rows(3)
    assert first.chunks == again.chunks
    assert (first.vectors == again.vectors).all()


async def test_scale_benchmark_reports_recall_in_range_and_never_short_results(
    store: Store, settings: Settings, tmp_path: Path
) -> None:
    assert settings.database_url is not None
    prefix = f"bench-{uuid.uuid4().hex[:8]}-"
    corpus = SyntheticCorpus(SyntheticSpec(chunks=2_000, tenants=20, prefix=prefix))
    try:
        load = await load_corpus(
            store,
            corpus,
            conninfo=settings.database_url.get_secret_value(),
            bulk=False,
            partition_min_chunks=_OWN_PARTITION_ABOVE,
            exact_search_max_chunks=_OWN_PARTITION_ABOVE,
        )
        measured = await measure_scale(
            store,
            corpus,
            queries_per_bucket=6,
            warmup=1,
            exact_max=settings.exact_search_max_chunks,
            variants=["shipped_statement", "work_mem_64mb"],
        )
        storage = await chunk_storage(store, corpus.spec.chunks)
    finally:
        # Back into the shared partitions first, so no partition of ours outlives the test.
        ours = [corpus.spec.tenant_id(rank) for rank in range(corpus.spec.tenants)]
        await rebalance(store, exact_search_max_chunks=0, min_chunks=10**9, tenants=ours)
        async with store.pool.connection() as conn:
            await conn.execute("DELETE FROM tenants WHERE tenant_id LIKE %s", (f"{prefix}%",))

    result = json.loads(write_result(tmp_path, "scale-smoke", {"load": load, **measured}))

    assert set(result["buckets"]) == set(BUCKETS)  # no tenant exceeds the exact threshold
    for bucket in result["buckets"].values():
        assert bucket["queries"] == 6
        assert bucket["tenant_chunks"]["min"] >= 10
        assert set(bucket["variants"]) == {"shipped_statement", "work_mem_64mb"}
        for variant in bucket["variants"].values():
            assert variant["recall_at_10"] == 1.0  # small tenants: the exact path
            assert variant["short_results"] == 0
            assert 0.0 <= variant["keyword_top10_overlap_with_shipped"] <= 1.0
        for path in ("exact", "hnsw", "service_rule"):
            figures = bucket[path]
            assert set(figures["hybrid_ms"]) == {"p50", "p95", "p99"}
            assert 0.0 <= figures["recall_at_10"] <= 1.0
            assert 0.0 <= figures["hybrid_recall_at_10"] <= 1.0
        for path in ("exact", "service_rule"):
            assert bucket[path]["short_vector"] == 0
            assert bucket[path]["short_hybrid_vector"] == 0
            assert bucket[path]["short_results"] == 0
        assert bucket["exact"]["recall_at_10"] == 1.0
        assert sum(bucket["service_rule"]["picked"].values()) == 6
    assert set(result["targets"]) == {
        "recall_at_10_ge_0_99",
        "never_short_when_tenant_has_10",
        "hybrid_p95_le_50ms",
    }
    assert result["variants"]["work_mem_64mb"] == {
        "path": "service rule",
        "settings": {"work_mem": "64MB"},
    }
    promoted = sum(size > _OWN_PARTITION_ABOVE for size in corpus.sizes)
    assert 0 < promoted < corpus.spec.tenants
    assert load["rebalance"]["promoted"] == promoted
    assert storage["partitions"] >= promoted + 1
    assert storage["index_count"]["hnsw"] >= promoted  # own partitions only
    assert {"hnsw", "gin", "btree"} <= set(storage["index_bytes"])
    assert storage["chunks_total_bytes"] >= storage["chunks_table_bytes"] > 0
    assert storage["bytes_per_million_chunks"] > 0
    assert {"exact", "hnsw"} <= set(result["explain_slowest_hybrid"])
    assert load["hnsw_build_seconds"] >= 0


def test_store_fingerprint_changes_with_either_threshold_and_not_between_calls() -> None:
    spec = SyntheticSpec(chunks=100_000, tenants=1000)
    first = store_fingerprint(spec, partition_min_chunks=1000, exact_search_max_chunks=20_000)
    assert first == store_fingerprint(
        spec, partition_min_chunks=1000, exact_search_max_chunks=20_000
    )
    assert first != store_fingerprint(
        spec, partition_min_chunks=2000, exact_search_max_chunks=20_000
    )
    assert first != store_fingerprint(
        spec, partition_min_chunks=1000, exact_search_max_chunks=5_000
    )
    assert len(first["schema_sha256"]) == 16
