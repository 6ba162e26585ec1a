"""A deterministic synthetic multi-tenant corpus for the scale and peer benchmarks.

Tenant sizes follow a Zipf–Mandelbrot law ``size(r) ∝ (r + q)^-s`` fitted so the smallest tenant
holds a few dozen chunks and the largest a fixed share of the table. Vectors are clustered like
real embeddings of runbooks: a shared set of global topics (the same services and symptoms recur
across tenants), a per-tenant offset per topic, and Gaussian noise per chunk, all normalised.
Everything comes from numpy generators seeded by ``(seed, tenant)``, so a tenant's rows and
queries are the same whichever order or process generates them.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

Matrix = npt.NDArray[np.float32]

_SERVICES = (
    "payments", "checkout", "search", "auth", "kafka", "redis", "postgres", "cdn", "ingress",
    "billing", "ledger", "inventory", "shipping", "notifications", "gateway", "scheduler",
    "elasticsearch", "rabbitmq", "memcached", "etcd", "vault", "consul", "prometheus", "grafana",
    "airflow", "spark", "clickhouse", "cassandra", "mongodb", "nginx", "envoy", "istio",
)  # fmt: skip
_SYMPTOMS = (
    "5xx errors", "high latency", "consumer lag", "memory evictions", "disk pressure",
    "certificate expiry", "replication lag", "connection exhaustion", "cpu throttling",
    "pod crashloop", "dns failures", "queue backlog", "oom kills", "slow queries",
    "split brain", "packet loss",
)  # fmt: skip
_COMPONENTS = (
    "connection pool", "worker queue", "leader node", "read replica", "sidecar proxy",
    "cron job", "cache tier", "load balancer", "storage volume", "message broker",
    "api tier", "batch runner",
)  # fmt: skip
# Ordinary runbook vocabulary: common enough that keyword search matches many chunks per tenant,
# as it does on real runbooks ("error", "restart", "check").
_WORDS = (
    "alert", "rollback", "deploy", "restart", "error", "timeout", "threshold", "metric",
    "dashboard", "escalate", "incident", "mitigate", "verify", "capacity", "quota", "region",
    "zone", "cluster", "replica", "shard", "index", "backup", "snapshot", "failover", "drain",
    "cordon", "rotate", "credential", "token", "certificate", "config", "flag", "release",
    "canary", "traffic", "retry", "backoff", "circuit", "breaker", "limit", "burst", "spike",
    "baseline", "saturation", "throughput", "heap", "garbage", "thread", "socket", "handshake",
    "upstream", "downstream", "consumer", "producer", "partition", "offset", "commit", "vacuum",
    "bloat", "checkpoint", "runbook", "owner", "pager", "ticket", "status", "health", "probe",
)  # fmt: skip
_SENTENCES = (
    "Check the {service} {component} dashboard as soon as {symptom} starts.",
    "If {symptom} persists, restart the {service} {w1} and watch the {w2} metric.",
    "Scale the {component} to {n} replicas before the {w1} window closes.",
    "Page the {service} owner when the {w1} {w2} stays above {n} percent.",
    "Roll back the last {service} deploy when {symptom} follows a release.",
    "Drain the {w1} node and confirm the {component} recovers within {n} minutes.",
    "Look for {w1} and {w2} errors in the {service} logs around the {symptom} alert.",
    "Raise the {component} limit to {n} only after the {w1} review.",
    "Compare the {w1} and {w2} graphs of {service} with last week's baseline.",
    "Escalate to the platform team if {symptom} spreads beyond one {component}.",
)
_QUESTIONS = (
    "how do I fix {symptom} on {service}",
    "{service} has {symptom} after a deploy, what should I check",
    "what to do when the {component} shows {symptom}",
    "{symptom} in {service} {component}: restart or roll back?",
    "runbook for {service} {symptom}",
)
_SECTIONS = ("Symptoms", "Diagnosis", "Mitigation", "Verification", "Escalation")

# Vector geometry, in units of a unit-length topic direction.
TENANT_OFFSET = 0.35  # how far a tenant's take on a topic sits from the shared topic
CHUNK_NOISE = 0.8  # per-chunk Gaussian noise (expected norm)
QUERY_NOISE = 0.8  # per-query Gaussian noise (expected norm)


@dataclass(frozen=True)
class SyntheticSpec:
    chunks: int
    tenants: int
    dim: int = 384
    seed: int = 7
    topics: int = 256
    chunks_per_document: int = 8
    min_tenant_chunks: int = 30
    largest_share: float = 0.05
    prefix: str = "syn-"

    def as_json(self) -> dict[str, Any]:
        return asdict(self)

    def tenant_id(self, rank: int) -> str:
        return f"{self.prefix}{rank:05d}"

    @property
    def embedding_model(self) -> str:
        return f"bench-synthetic-{self.dim}"


@dataclass(frozen=True)
class Topic:
    service: str
    symptom: str
    component: str


@dataclass(frozen=True)
class TenantRows:
    """One tenant's documents and chunks, in load order."""

    tenant: str
    documents: list[tuple[str, str, str]]  # (document_id, title, service)
    chunks: list[tuple[str, int, list[str], str, str, str]]  # doc, ordinal, path, text, svc, title
    vectors: Matrix


@dataclass(frozen=True)
class Query:
    tenant: str
    tenant_chunks: int
    question: str
    vector: Matrix
    topic: str  # document ids about the question's topic start with this

    def on_topic(self, document_id: str) -> bool:
        return document_id.startswith(self.topic)


def topic(index: int) -> Topic:
    return Topic(
        service=_SERVICES[index % len(_SERVICES)],
        symptom=_SYMPTOMS[(index // len(_SERVICES)) % len(_SYMPTOMS)],
        component=_COMPONENTS[(index * 7) % len(_COMPONENTS)],
    )


def tenant_sizes(spec: SyntheticSpec) -> list[int]:
    """Chunks per tenant, largest first, summing to ``spec.chunks``.

    ``size(r) = M·((1 + q)/(r + q))^s`` with ``M`` the largest size and ``s`` fixed by the ratio of
    largest to smallest; ``q`` is found by bisection so the sizes add up to the total.
    """
    n, total = spec.tenants, spec.chunks
    mean = total / n
    smallest = max(1.0, min(float(spec.min_tenant_chunks), mean / 2))
    largest = min(float(total), max(spec.largest_share * total, 4 * mean))
    ranks = np.arange(1, n + 1, dtype=np.float64)

    def shape(q: float) -> npt.NDArray[np.float64]:
        if n == 1 or largest <= smallest:
            return np.full(n, mean)
        s = math.log(largest / smallest) / math.log((n + q) / (1 + q))
        values: npt.NDArray[np.float64] = largest * ((1 + q) / (ranks + q)) ** s
        return values

    q = 0.0
    if shape(0.0).sum() < total:
        # The sum grows with q (from a Zipf head towards an exponential); bisect on log q.
        low, high = -6.0, 7.0
        for _ in range(100):
            mid = (low + high) / 2
            if shape(10.0**mid).sum() < total:
                low = mid
            else:
                high = mid
        q = 10.0**high
    raw = shape(q) * (total / shape(q).sum())
    sizes = np.maximum(np.floor(raw).astype(np.int64), 1)
    remainder = total - int(sizes.sum())
    order = np.argsort(-(raw - np.floor(raw)), kind="stable")
    for i in range(abs(remainder)):
        sizes[order[i % n]] += 1 if remainder > 0 else -1
    return sorted((int(v) for v in sizes), reverse=True)


def _unit_rows(matrix: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    norms: npt.NDArray[np.float64] = np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix / np.maximum(norms, 1e-12)


def _global_topics(spec: SyntheticSpec) -> npt.NDArray[np.float64]:
    rng = np.random.default_rng([spec.seed, 0x70])
    return _unit_rows(rng.standard_normal((spec.topics, spec.dim)))


@dataclass(frozen=True)
class TenantPlan:
    """A tenant's topics (indexes into the global topics), their centres and chunk counts."""

    rank: int
    size: int
    topics: npt.NDArray[np.int64]
    centres: npt.NDArray[np.float64]
    weights: npt.NDArray[np.float64]


class SyntheticCorpus:
    """The corpus a spec describes; tenants and queries are generated on demand."""

    def __init__(self, spec: SyntheticSpec) -> None:
        self.spec = spec
        self.sizes = tenant_sizes(spec)
        self._topics = _global_topics(spec)
        popularity = 1.0 / (np.arange(spec.topics) + 8.0)
        self._popularity = popularity / popularity.sum()

    def plan(self, rank: int) -> TenantPlan:
        spec = self.spec
        size = self.sizes[rank]
        rng = np.random.default_rng([spec.seed, 0x7E, rank])
        count = int(min(spec.topics, max(2, min(64, round(size / 150)))))
        topics = rng.choice(spec.topics, size=count, replace=False, p=self._popularity)
        offsets = _unit_rows(rng.standard_normal((count, spec.dim)))
        centres = _unit_rows(self._topics[topics] + TENANT_OFFSET * offsets)
        weights = rng.dirichlet(np.full(count, 2.0))
        return TenantPlan(rank, size, topics.astype(np.int64), centres, weights)

    def tenant_rows(self, rank: int) -> TenantRows:
        spec = self.spec
        plan = self.plan(rank)
        tenant = spec.tenant_id(rank)
        rng = np.random.default_rng([spec.seed, 0xC4, rank])
        n_docs = max(1, math.ceil(plan.size / spec.chunks_per_document))
        doc_topics = rng.choice(len(plan.topics), size=n_docs, p=plan.weights)
        documents: list[tuple[str, str, str]] = []
        chunks: list[tuple[str, int, list[str], str, str, str]] = []
        chunk_topic = np.empty(plan.size, dtype=np.int64)
        words = rng.integers(0, len(_WORDS), size=(plan.size, 8))
        sentences = rng.integers(0, len(_SENTENCES), size=(plan.size, 4))
        numbers = rng.integers(2, 95, size=(plan.size, 4))
        position = 0
        for doc in range(n_docs):
            local = int(doc_topics[doc])
            about = topic(int(plan.topics[local]))
            document_id = f"{about.service}/{about.symptom.replace(' ', '-')}-{doc:05d}"
            title = f"{about.service} {about.symptom} ({about.component})"
            documents.append((document_id, title, about.service))
            in_doc = min(spec.chunks_per_document, plan.size - position)
            for ordinal in range(in_doc):
                row = position + ordinal
                text = " ".join(
                    _SENTENCES[int(sentences[row, i])].format(
                        service=about.service,
                        symptom=about.symptom,
                        component=about.component,
                        w1=_WORDS[int(words[row, 2 * i])],
                        w2=_WORDS[int(words[row, 2 * i + 1])],
                        n=int(numbers[row, i]),
                    )
                    for i in range(4)
                )
                path = [title, _SECTIONS[ordinal % len(_SECTIONS)]]
                chunks.append((document_id, ordinal, path, text, about.service, title))
                chunk_topic[row] = local
            position += in_doc
            if position >= plan.size:
                break
        noise = rng.standard_normal((plan.size, spec.dim)) * (CHUNK_NOISE / math.sqrt(spec.dim))
        vectors = _unit_rows(plan.centres[chunk_topic] + noise).astype(np.float32)
        return TenantRows(tenant, documents, chunks, vectors)

    def queries(self, rank: int, count: int, *, stream: int) -> list[Query]:
        """``count`` questions for one tenant: a noisy copy of one of its topic centres each."""
        spec = self.spec
        plan = self.plan(rank)
        rng = np.random.default_rng([spec.seed, 0x9E, stream, rank])
        found = []
        for _ in range(count):
            local = int(rng.choice(len(plan.topics), p=plan.weights))
            about = topic(int(plan.topics[local]))
            noise = rng.standard_normal(spec.dim) * (QUERY_NOISE / math.sqrt(spec.dim))
            vector = plan.centres[local] + noise
            vector = (vector / np.linalg.norm(vector)).astype(np.float32)
            template = _QUESTIONS[int(rng.integers(len(_QUESTIONS)))]
            question = template.format(
                service=about.service, symptom=about.symptom, component=about.component
            )
            prefix = f"{about.service}/{about.symptom.replace(' ', '-')}-"
            found.append(Query(spec.tenant_id(rank), plan.size, question, vector, prefix))
        return found


def document_sha(tenant: str, document_id: str) -> str:
    return hashlib.sha256(f"{tenant}/{document_id}".encode()).hexdigest()
