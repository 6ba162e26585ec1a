"""The gate before any model call: a calibrated estimate that the tenant's runbooks answer this.

A small logistic model over features that are normalised by the tenant's own corpus, so that
what it learned on the dev collections carries over to runbooks it never saw
(docs/how-it-works.md, "How the gate was calibrated"):

- ``best_cosine`` and ``cosine_margin`` — how close the best chunk is, and how far it stands
  out from the question's typical neighbours in this tenant (MiniLM gives unrelated runbook
  prose 0.2-0.45 with almost any incident question, so the margin says more than the level);
- ``idf_coverage`` — the share of the question's BM25 weight that one top chunk holds (a chunk
  holding "failover" holds the question's "fail over", ``rag.retrieval.compounds``);
- ``unknown_share`` — the share of that weight in words this tenant never uses ("patroni"
  asked of a Kubernetes tenant) and that are not ordinary words to the embedding model
  (``rag.embedding.ordinary_words``: "went" or "hammering" unused by a tenant says nothing; an
  ordinary
  word the tenant never uses counts nowhere, like a stopword), except the question's last word,
  which counts whatever kind it is: a question that ends on a noun ends on what it asks about
  ("how do I rotate the vault root token?"), and runbooks that never name it do not answer it;
- ``unknown_name`` — an alert or identifier (``CamelCase``, ``snake_case``) the tenant never
  mentions;
- ``resolved`` — the alert post resolved to one of the tenant's runbooks by its name in any
  spelling or by its ``runbook_url``;
- ``agreement`` — the best runbook is in both retrievers' top five.

Beside the model, a question or alert post that names an alert the tenant has a runbook for
(``ScopeHints.alert_document``, that runbook among the candidates) answers; and a question that
names a well-known product (a database engine, a queue, a cloud service, a tool) that no chunk
of the tenant holds abstains whatever it scores (``rag.gate.foreign_subjects``): its subject
is a system the tenant does not run.

The features read the candidates in the ranker's first order (``Candidates.ranked_for_gate``):
which section a runbook shows first decides what to show, not whether to answer.
Coefficients live in ``rag/gate/gate_model.json`` with the embedding model they were fitted for;
``python -m rag.gate_fit`` refits them on the dev split. ``RUNBOOK_ANSWER_THRESHOLD`` moves the
operating point. The service and the fit (``rag.evaluation.gate_fit``) both build the features from
a
``GateQuery`` through ``features``, so a refit sees exactly what the service decides on.
"""

from __future__ import annotations

import json
import math
import re
import statistics
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from rag.errors import ConfigurationError
from rag.gate.foreign_subjects import foreign_subjects
from rag.retrieval.alerts import Alert
from rag.retrieval.escalation import without_escalation_ask
from rag.retrieval.evidence import Evidence
from rag.retrieval.retrieve import Candidates, word_runs
from rag.retrieval.terms import identifiers

FEATURES = (
    "best_cosine",
    "cosine_margin",
    "idf_coverage",
    "unknown_share",
    "unknown_name",
    "resolved",
    "agreement",
)
# How many of the best chunks the features look at.
_DEPTH = 5
_COVERAGE_DEPTH = 3
# Names with an inner capital (``KubePodCrashLooping``) name one thing; hyphenated and numbered
# tokens are usually instances (``web-5d8f9``), and the parser splits snake_case anyway.
_NAME = re.compile(r"^[A-Za-z]+[a-z][A-Z][A-Za-z]*$")
# A stemmer trims at most a few letters off a name's end ("...Looping" -> "...loop").
_STEM_SLACK = 3


@dataclass(frozen=True)
class GateModel:
    embedding_model: str
    coefficients: dict[str, float]
    intercept: float
    threshold: float

    @classmethod
    def load(cls, path: Path | None = None) -> GateModel:
        try:
            if path is None:
                text = resources.files("rag.gate").joinpath("gate_model.json").read_text("utf-8")
            else:
                text = path.read_text(encoding="utf-8")
            data = json.loads(text)
            coefficients = {name: float(data["coefficients"][name]) for name in FEATURES}
            return cls(
                str(data["embedding_model"]),
                coefficients,
                float(data["intercept"]),
                float(data["threshold"]),
            )
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise ConfigurationError(f"cannot read the gate model: {exc}") from exc

    def probability(self, features: dict[str, float]) -> float:
        z = self.intercept + sum(self.coefficients[n] * features[n] for n in FEATURES)
        return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))


@dataclass(frozen=True)
class GateQuery:
    """What the gate reads besides the candidates, as the service searched it."""

    # The retrieval's own query: an alert post's search text, else the question.
    text: str
    # The tenant's runbook names and titles, lowercased.
    names: frozenset[str]
    # The parsed alert post, resolved to the tenant's runbook when it names or links one.
    alert: Alert | None = None
    # Whether the tenant's text uses the alert's name written as one word
    # (``kube_pod_crash_looping`` -> ``kubepodcrashlooping``); None when not looked up.
    alert_name_used: bool | None = None
    # The query's lexemes that the tenant never uses but that come only from ordinary words
    # (``rag.embedding.ordinary_words``): neither known nor unknown to the gate.
    ordinary_unknown: frozenset[str] = frozenset()
    # The runbook of the one alert the question or post names (``ScopeHints.alert_document``):
    # the tenant wrote a runbook for what fired.
    named_runbook: str | None = None


@dataclass(frozen=True)
class Gate:
    """The decision: ``reason`` is None when the evidence is good enough to answer from."""

    reason: str | None
    best_cosine: float
    term_coverage: float
    probability: float = 0.0
    # The model's inputs, exactly what a refit reads (``rag.evaluation.gate_fit``).
    features: tuple[tuple[str, float], ...] = ()
    # The rules that decide past the model: a named alert's runbook answers, a product the
    # tenant never names abstains.
    rules: tuple[tuple[str, float], ...] = ()


def features(asked: GateQuery, candidates: Candidates) -> dict[str, float]:
    """The gate's inputs for one retrieval."""
    evidence = candidates.ranked_for_gate
    top = evidence[:_DEPTH]
    best_cosine = max((e.cosine for e in top), default=-1.0)
    neighbours = [e.cosine for e in evidence if e.vector_rank is not None]
    typical_cosine = statistics.median(neighbours) if neighbours else best_cosine
    idf = _idf(candidates)
    # An alert post's search text ends on its summary's last word, not on what is asked.
    # "…, who do I page?" is about what comes before the asking.
    subject = (
        None
        if asked.alert is not None
        else _last_lexeme(without_escalation_ask(asked.text), candidates)
    )
    unknown = [
        lexeme
        for lexeme, df in candidates.term_df.items()
        if df == 0 and (lexeme == subject or lexeme not in asked.ordinary_unknown)
    ]
    # A word the tenant never uses weighs what a typical known word of the question weighs:
    # as rare as can be would let one typo or plural ("502s") outweigh the rest.
    typical_idf = sum(idf.values()) / len(idf) if idf else 1.0
    total = sum(idf.values()) + typical_idf * len(unknown)
    coverage = 0.0
    if total:
        for item in top[:_COVERAGE_DEPTH]:
            # A chunk holding "failover" holds the question's "fail over".
            written = {candidates.spelled_as.get(lexeme, lexeme) for lexeme in item.matched_terms}
            held = sum(idf.get(lexeme, 0.0) for lexeme in written)
            coverage = max(coverage, held / total)
    return {
        "best_cosine": best_cosine,
        "cosine_margin": best_cosine - typical_cosine,
        "idf_coverage": coverage,
        "unknown_share": typical_idf * len(unknown) / total if total else 1.0,
        "unknown_name": float(_unknown_name(asked, candidates)),
        "resolved": float(asked.alert is not None and asked.alert.runbook is not None),
        "agreement": float(_agree(evidence)),
    }


def decide(asked: GateQuery, candidates: Candidates, model: GateModel, *, threshold: float) -> Gate:
    if not candidates.evidence:
        return Gate("no_evidence", -1.0, 0.0)
    found = features(asked, candidates)
    probability = model.probability(found)
    reason = None if probability >= threshold else "low_confidence"
    named = asked.named_runbook is not None and any(
        e.document_id == asked.named_runbook for e in candidates.evidence
    )
    if named:
        # The question names an alert the tenant has a runbook for, and that runbook is among
        # the candidates: it answers, however the rest of the question is worded ("KubeNodeNotReady
        # is it serious??", "TargetDown job=node-exporter whats the impact").
        reason = None
    # A named alert is the subject: a product in its labels or summary is where it fired
    # ("CPUThrottlingHigh … namespace ingress-nginx", dev alert post ``pa12``).
    foreign = () if named else foreign_subjects(candidates.term_df, candidates.term_words)
    if foreign:
        # A product the tenant's runbooks never name is a system the tenant does not run (or
        # never wrote a runbook for): words it shares with a runbook were written for another
        # system (``rag.gate.foreign_subjects``).
        reason = "low_confidence"
    return Gate(
        reason,
        found["best_cosine"],
        found["idf_coverage"],
        probability,
        tuple(found.items()),
        (("named_runbook", float(named)), ("foreign_subject", float(bool(foreign)))),
    )


def _idf(candidates: Candidates) -> dict[str, float]:
    """BM25 idf of each question lexeme the tenant uses."""
    n = max(candidates.tenant_chunks, 1)
    return {
        lexeme: math.log(1 + (n - df + 0.5) / (df + 0.5))
        for lexeme, df in candidates.term_df.items()
        if df > 0
    }


def _last_lexeme(text: str, candidates: Candidates) -> str | None:
    """The lexeme of the last word of ``text``, None when that word has none (a stopword): an
    English question that ends on a noun ends on the head of its object ("rotate the vault
    root token"); one that ends on "it", "them" or "on" names its subject earlier."""
    words = word_runs(text)
    if not words:
        return None
    last = words[-1]
    return next(
        (lexeme for lexeme, spelled in candidates.term_words.items() if last in spelled),
        None,
    )


def _unknown_name(asked: GateQuery, candidates: Candidates) -> bool:
    """An alert name that resolves to no runbook and that the tenant never writes, or a
    CamelCase identifier of a question the tenant's vocabulary lacks. A generic alert (one rule
    for many components) is never looked up by the service and falls to the vocabulary check."""
    alert = asked.alert
    if alert is not None and alert.runbook is not None:
        return False
    if alert is not None and alert.name and asked.alert_name_used is not None:
        # Postgres splits ``kube_pod_crash_looping`` into words every Kubernetes tenant uses;
        # the name written as one word is what a runbook about that alert would contain.
        return not asked.alert_name_used
    names = asked.names
    wanted = (
        [alert.name]
        if alert and alert.name
        else [t for t in identifiers(asked.text) if _NAME.match(t)]
    )
    for name in wanted:
        lowered = name.lower()
        if lowered in names:
            continue
        # The english parser keeps a CamelCase name as one lowercase, stemmed lexeme.
        stems = [
            df
            for lexeme, df in candidates.term_df.items()
            if lowered.startswith(lexeme) and len(lexeme) >= len(lowered) - _STEM_SLACK
        ]
        if stems and max(stems) == 0:
            return True
    return False


def _agree(evidence: tuple[Evidence, ...]) -> bool:
    if not evidence:
        return False
    document = evidence[0].document_id
    by_vector = {
        e.document_id for e in evidence if e.vector_rank is not None and e.vector_rank <= 5
    }
    by_keyword = {
        e.document_id for e in evidence if e.keyword_rank is not None and e.keyword_rank <= 5
    }
    return document in by_vector and document in by_keyword
