"""The benchmarks' verdicts and settings, from figures written out here: the peer comparison per
bucket, and the session settings each labelled variant runs the shipped queries with."""

from __future__ import annotations

from typing import Any

from bench.peer import compare_bucket, peer_targets
from bench.scale_measure import bucket_ranks
from bench.scale_variants import EXACT, HNSW, VARIANTS


def _bucket(
    peer_p95: float, ours_vector_p95: float, ours_hybrid_p95: float, peer_recall: float
) -> dict[str, Any]:
    return {
        "peer_vector_search": {
            "vector_ms": {"p50": peer_p95 / 2, "p95": peer_p95},
            "recall_at_10": peer_recall,
        },
        "ours_service_rule": {
            "vector_ms": {"p50": ours_vector_p95 / 2, "p95": ours_vector_p95},
            "hybrid_ms": {"p50": ours_hybrid_p95 / 2, "p95": ours_hybrid_p95},
            "recall_at_10": 1.0,
            "hybrid_recall_at_10": 1.0,
        },
    }


def test_peer_bucket_passes_at_three_times_faster_p95_and_equal_recall() -> None:
    found = compare_bucket(_bucket(30.0, 10.0, 12.0, peer_recall=1.0))
    assert found["peer_p95_ms"] == 30.0
    assert found["vector"] == {
        "ours_p95_ms": 10.0,
        "peer_over_ours_p95": 3.0,
        "peer_over_ours_p50": 3.0,
        "ours_recall_at_10": 1.0,
        "peer_recall_at_10": 1.0,
        "passes": True,
    }
    assert found["hybrid"]["peer_over_ours_p95"] == 2.5
    assert found["hybrid"]["passes"] is False


def test_peer_bucket_fails_when_ours_is_faster_but_recalls_less() -> None:
    bucket = _bucket(100.0, 1.0, 1.0, peer_recall=1.0)
    bucket["ours_service_rule"]["recall_at_10"] = 0.98
    found = compare_bucket(bucket)
    assert found["vector"]["passes"] is False
    assert found["hybrid"]["passes"] is True


def test_peer_target_holds_only_when_every_bucket_passes() -> None:
    buckets = {
        "small": _bucket(200.0, 2.0, 7.0, peer_recall=1.0),
        "large": _bucket(30.0, 30.0, 90.0, peer_recall=0.95),
    }
    for bucket in buckets.values():
        bucket["comparison"] = compare_bucket(bucket)
    targets = peer_targets(buckets)
    assert targets["ours_vector_ge_3x_faster_at_equal_or_better_recall"] == {
        "small": True,
        "large": False,
        "all": False,
    }


def test_variants_add_settings_to_the_shipped_ones_of_their_path() -> None:
    relaxed = VARIANTS["hnsw_relaxed_order"].mode(rule_exact=True)
    assert not relaxed.exact  # an HNSW variant stays on the HNSW path for every tenant
    assert dict(relaxed.settings) == {**dict(HNSW.settings), "hnsw.iterative_scan": "relaxed_order"}
    jit = VARIANTS["exact_jit_off"].mode(rule_exact=False)
    assert jit.exact and dict(jit.settings) == {**dict(EXACT.settings), "jit": "off"}


def test_service_rule_variants_follow_the_path_the_service_picks() -> None:
    variant = VARIANTS["work_mem_64mb"]
    assert dict(variant.mode(rule_exact=True).settings) == {
        **dict(EXACT.settings),
        "work_mem": "64MB",
    }
    assert dict(variant.mode(rule_exact=False).settings) == {
        **dict(HNSW.settings),
        "work_mem": "64MB",
    }
    assert VARIANTS["shipped_statement"].mode(rule_exact=False).settings == HNSW.settings


def test_buckets_include_the_largest_tenants_the_service_scans_exactly() -> None:
    sizes = [5000 - 20 * rank for rank in range(200)]  # 5,000 down to 1,020
    exact = [size <= 2000 for size in sizes]
    ranks = bucket_ranks(sizes, exact)
    assert list(ranks) == ["small", "under_threshold", "medium", "large"]  # smallest first
    first_exact = exact.index(True)
    assert ranks["under_threshold"] == range(first_exact, first_exact + 2)
    assert ranks["large"] == range(0, 2) and ranks["small"] == range(198, 200)


def test_no_threshold_bucket_when_every_tenant_is_scanned_exactly() -> None:
    assert list(bucket_ranks([100 - rank for rank in range(100)], [True] * 100)) == [
        "small",
        "medium",
        "large",
    ]
