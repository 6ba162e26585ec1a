"""Average-linkage clustering of question vectors: the rule a gap's members must meet."""

from __future__ import annotations

import math

from bot.core.gaps.clusters import cluster, mean_similarity, unit_rows


def _at(degrees: float) -> list[float]:
    return [math.cos(math.radians(degrees)), math.sin(math.radians(degrees)), 0.0]


def test_close_vectors_group_and_a_distant_one_stays_alone() -> None:
    vectors = [_at(0), _at(10), _at(20), [0.0, 0.0, 1.0], _at(5)]
    assert cluster(vectors, threshold=0.9) == [[0, 1, 2, 4], [3]]


def test_a_chain_of_neighbours_does_not_merge_when_its_ends_are_unlike() -> None:
    # Each step is 40° (cos 0.77): single linkage would chain all five; the mean of a group
    # spanning 160° is far below the threshold, so average linkage keeps the ends apart.
    vectors = [_at(0), _at(40), _at(80), _at(120), _at(160)]
    groups = cluster(vectors, threshold=0.7)
    assert all(len(g) <= 2 for g in groups) and sorted(i for g in groups for i in g) == [
        0,
        1,
        2,
        3,
        4,
    ]


def test_nothing_merges_above_a_threshold_of_one_and_everything_at_minus_one() -> None:
    vectors = [_at(0), _at(30), _at(200)]
    assert cluster(vectors, threshold=1.01) == [[0], [1], [2]]
    assert cluster(vectors, threshold=-1.0) == [[0, 1, 2]]
    assert cluster([], threshold=0.5) == []


def test_a_newcomer_is_measured_by_its_mean_similarity_to_the_group() -> None:
    group = unit_rows([_at(0), _at(60)])
    assert math.isclose(mean_similarity(_at(30), group), math.cos(math.radians(30)))
    assert math.isclose(mean_similarity([0.0, 0.0, 2.0], group), 0.0, abs_tol=1e-12)
