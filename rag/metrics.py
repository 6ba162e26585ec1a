"""Prometheus metrics of the core. No tenant label: tenants are unbounded and identifying."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest

_LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)


class RagMetrics:
    """One set of metrics per registry, so tests and the app never share global state."""

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry or CollectorRegistry()
        self.retrieval_seconds = Histogram(
            "runbook_retrieval_seconds",
            "Hybrid retrieval latency (query embedding excluded).",
            registry=self.registry,
            buckets=_LATENCY_BUCKETS,
        )
        self.embed_seconds = Histogram(
            "runbook_query_embedding_seconds",
            "Question embedding latency.",
            registry=self.registry,
            buckets=_LATENCY_BUCKETS,
        )
        self.ask_seconds = Histogram(
            "runbook_ask_seconds",
            "Whole ask latency, by outcome.",
            ["status"],
            registry=self.registry,
            buckets=_LATENCY_BUCKETS,
        )
        self.retrieval_hits = Histogram(
            "runbook_retrieval_hits",
            "Fused candidates per retrieval.",
            registry=self.registry,
            buckets=(0, 1, 2, 5, 10, 20, 40, 80),
        )
        self.abstentions = Counter(
            "runbook_abstentions", "Abstentions by reason.", ["reason"], registry=self.registry
        )
        self.citations_dropped = Counter(
            "runbook_citations_dropped",
            "Citations that failed verification.",
            registry=self.registry,
        )
        self.provider_failures = Counter(
            "runbook_answer_provider_failures",
            "Answer provider failures by code.",
            ["code"],
            registry=self.registry,
        )
        self.errors = Counter(
            "runbook_ask_errors",
            "Asks that ended in an error, by code.",
            ["code"],
            registry=self.registry,
        )

    def render(self) -> bytes:
        return generate_latest(self.registry)
