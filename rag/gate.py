"""The gate before any model call: abstain deterministically when the evidence is weak.

Two signals, calibrated on ``evals/golden.jsonl`` (see README, "How the gate was calibrated"):
the best cosine similarity of the question to a retrieved chunk, and how much of the
question's own vocabulary the best few chunks contain. MiniLM gives unrelated runbook prose a
cosine of 0.2-0.45 with almost any incident question, so in that band only term overlap tells
"about this" from "about incidents in general".
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rag.evidence import Evidence
from rag.terms import question_terms

# How many of the best chunks may supply the question's terms.
_COVERAGE_DEPTH = 5


@dataclass(frozen=True)
class GateThresholds:
    min_cosine: float
    confident_cosine: float
    min_term_coverage: float


@dataclass(frozen=True)
class Gate:
    """The decision: ``reason`` is None when the evidence is good enough to answer from."""

    reason: str | None
    best_cosine: float
    term_coverage: float


def term_coverage(question: str, evidence: Sequence[Evidence]) -> float:
    """The largest weighted share of the question's terms that one top chunk contains."""
    wanted = question_terms(question)
    total = sum(wanted.values())
    if not total:
        return 0.0
    best = 0.0
    for item in evidence[:_COVERAGE_DEPTH]:
        present = question_terms(f"{item.title} {' '.join(item.heading_path)} {item.content}")
        best = max(best, sum(w for term, w in wanted.items() if term in present) / total)
    return best


def decide(question: str, evidence: Sequence[Evidence], thresholds: GateThresholds) -> Gate:
    if not evidence:
        return Gate("no_evidence", -1.0, 0.0)
    best_cosine = max(e.cosine for e in evidence)
    coverage = term_coverage(question, evidence)
    if best_cosine < thresholds.min_cosine:
        return Gate("low_confidence", best_cosine, coverage)
    if best_cosine < thresholds.confident_cosine and coverage < thresholds.min_term_coverage:
        return Gate("low_confidence", best_cosine, coverage)
    return Gate(None, best_cosine, coverage)
