"""Grouping questions by meaning: average-linkage agglomerative clustering on cosine similarity.

Average linkage is the rule a reader can check: two groups merge only while the mean similarity
of every question in one to every question in the other stays at or above the threshold, so no
group holds a question that is, on average, unlike the rest. The threshold is fitted on the
public dev set (``bench/gap_fit.py``; ``bot/core/gaps/thresholds.json``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

Matrix = npt.NDArray[np.float64]
Vector = Sequence[float] | npt.NDArray[Any]


def unit_rows(vectors: Sequence[Vector] | npt.NDArray[Any]) -> Matrix:
    """Rows scaled to length 1 (a zero row stays zero and is similar to nothing)."""
    if len(vectors) == 0:
        return np.zeros((0, 0), dtype=np.float64)
    matrix = np.asarray(vectors, dtype=np.float64)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    units = np.zeros_like(matrix)
    np.divide(matrix, norms, out=units, where=norms > 0)
    return units


def cluster(vectors: Sequence[Vector] | npt.NDArray[Any], threshold: float) -> list[list[int]]:
    """Indices of ``vectors`` in groups, largest first; each index in exactly one group."""
    if len(vectors) == 0:
        return []
    units = unit_rows(vectors)
    n = len(units)
    # Sum of pairwise similarities between groups, and their mean = sum / (|a| * |b|); only
    # the merged group's row and column change after a merge.
    sums = units @ units.T
    means = sums.copy()
    np.fill_diagonal(means, -np.inf)
    members: list[list[int]] = [[i] for i in range(n)]
    sizes = np.ones(n, dtype=np.float64)
    while n > 1:
        flat = int(np.argmax(means))
        a, b = divmod(flat, n)
        if means[a, b] < threshold:
            break
        keep, gone = min(a, b), max(a, b)
        members[keep] += members[gone]
        members[gone] = []
        sums[keep, :] += sums[gone, :]
        sums[:, keep] = sums[keep, :]
        sizes[keep] += sizes[gone]
        sizes[gone] = 0
        row = sums[keep, :] / (sizes[keep] * np.maximum(sizes, 1))
        row[sizes == 0] = -np.inf  # merged-away groups
        row[keep] = -np.inf
        means[keep, :] = row
        means[:, keep] = row
        means[gone, :] = -np.inf
        means[:, gone] = -np.inf
    groups = [sorted(m) for m in members if m]
    return sorted(groups, key=lambda g: (-len(g), g[0]))


def mean_similarity(vector: Vector, group: Matrix) -> float:
    """Mean cosine of one vector to the unit rows of a group (the linkage a newcomer meets)."""
    [unit] = unit_rows([np.asarray(vector, dtype=np.float64)])
    return float(np.mean(group @ unit)) if len(group) else 0.0
