"""What the scale and peer benchmarks record per query and summarise per bucket."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from bench.synthetic import Query

K = 10


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


def recall_at_k(found: Sequence[int | str], truth: Sequence[int | str]) -> float:
    if not truth:
        return 1.0
    return len(set(found[:K]) & set(truth)) / len(truth)
