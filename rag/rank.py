"""Fusing the two retrievers' lists into one ranking, with the signals a runbook's shape gives.

Reciprocal Rank Fusion of the vector and BM25 ranks (weighted), then three runbook-aware terms:

- **names**: a question (or alert) naming a runbook's alert exactly (``KubePodCrashLooping``)
  wins; naming it in words ("statefulset replicas mismatch") counts less;
- **section intent**: "how do I fix" prefers Mitigation sections, "what does it mean" Meaning,
  "what breaks" Impact, "how do I check" Diagnosis — runbooks repeat the same words in every
  section, so the heading is what tells them apart;
- **document support**: a chunk whose runbook has other strong chunks rises, so the best
  runbook's sections come together instead of one stray section of a weaker runbook.

The weights were fitted on the dev split (``python -m rag.gate_fit --ranking``, README
"How the gate was calibrated").
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from functools import lru_cache

from rag.evidence import Evidence

# Reciprocal Rank Fusion constant from Cormack et al.; 60 is the value the literature and
# pgvector's own hybrid example use.
RRF_K = 60
_FIRST = 1.0 / (RRF_K + 1)


@dataclass(frozen=True)
class RankWeights:
    """Fusion weights, in units of "a first place in one list" (1 / (RRF_K + 1))."""

    vector: float = 2.0
    keyword: float = 1.2
    # A scope hint (a service the channel or question names) reorders near ties only.
    service: float = 1.0
    exact_name: float = 1.0
    loose_name: float = 0.5
    intent: float = 0.25
    # Share of the rest of the document's best other chunk added to a chunk.
    document: float = 0.15
    # What a section is worth when the question does not say what it wants: an on-call
    # engineer describing a symptom wants the steps more often than the explanation.
    mitigation: float = 0.3
    diagnosis: float = 0.3
    meaning: float = 0.0
    impact: float = -0.3

    def section_prior(self, kinds: frozenset[str]) -> float:
        priors = [getattr(self, kind) for kind in kinds]
        return max(priors) if priors else 0.0


DEFAULT_WEIGHTS = RankWeights()


@dataclass(frozen=True)
class ScopeHints:
    """Ranking signals: services and documents the question or its channel points at.

    ``documents`` are named exactly (an alert name, a runbook id); ``loose_documents`` are named
    in words (every part of ``etcdNoLeader`` appears in the question).
    """

    services: frozenset[str] = frozenset()
    documents: frozenset[str] = frozenset()
    loose_documents: frozenset[str] = frozenset()

    def reasons_for(self, evidence: Evidence) -> tuple[str, ...]:
        reasons = []
        if evidence.service is not None and evidence.service in self.services:
            reasons.append(f"service:{evidence.service}")
        if evidence.document_id in self.documents:
            reasons.append(f"named:{evidence.document_id}")
        elif evidence.document_id in self.loose_documents:
            reasons.append(f"named-in-words:{evidence.document_id}")
        return tuple(reasons)


_INTENTS: dict[str, tuple[re.Pattern[str], re.Pattern[str]]] = {
    # intent: (how a question asks for it, how a runbook heads it)
    "mitigation": (
        re.compile(
            r"\b(fix|fixe?s|resolve|mitigat\w*|remediat\w*|recover|workaround|get rid|shrink|"
            r"clean ?up|free up|reduce|increase|resize|grow|expand|restart|stop|unblock|"
            r"how (?:do|can|should) (?:i|we)(?! (?:check|see|find|tell|know|look|verify|confirm))|"
            r"how to(?! (?:check|see|find|tell|know|look|verify|confirm))|"
            r"what (?:do|should|can) (?:i|we) do|get (?:it|them) back|disable|enable|"
            r"steps?|procedure)\b",
            re.I,
        ),
        re.compile(r"mitigat|remediat|resol|fix|recover|solution|workaround|procedure|steps", re.I),
    ),
    "diagnosis": (
        re.compile(
            r"\b(check|find|which|why|cause[sd]?|investigat\w*|diagnos\w*|debug|query|queries|"
            r"troubleshoot\w*|identify|confirm|look at|see|verify|logs?|what(?:'s| is) wrong|"
            r"where (?:do|should|can) (?:i|we) (?:look|start)|where to (?:look|start)|"
            r"tell which)\b",
            re.I,
        ),
        re.compile(r"diagnos|troubleshoot|investigat|debug|check|verif|identif", re.I),
    ),
    "impact": (
        re.compile(
            r"\b(impact\w*|affect\w*|break\w*|consequence\w*|risk\w*|serious|matter|harm\w*|"
            r"dangerous|bad|safe to ignore|ignore|users? notice|customers?)\b",
            re.I,
        ),
        re.compile(r"impact|consequence|effect", re.I),
    ),
    "meaning": (
        re.compile(
            r"\b(mean\w*|what is|what's|what does|explain|description|about)\b|fir(?:e|es|ing) "
            r"(?:for|when|on)",
            re.I,
        ),
        re.compile(r"meaning|description|overview|summary|about", re.I),
    ),
}


@lru_cache(maxsize=4096)
def question_intents(question: str) -> frozenset[str]:
    return frozenset(name for name, (asks, _) in _INTENTS.items() if asks.search(question))


def section_intents(evidence: Evidence) -> frozenset[str]:
    # The title is the runbook's name, not a section: only headings below it say what it is.
    return _heading_intents(evidence.heading_path[1:] or evidence.heading_path)


@lru_cache(maxsize=65536)
def _heading_intents(headings: tuple[str, ...]) -> frozenset[str]:
    text = " ".join(headings)
    return frozenset(name for name, (_, heads) in _INTENTS.items() if heads.search(text))


def fuse(
    found: list[Evidence],
    hints: ScopeHints,
    question: str,
    weights: RankWeights | None = None,
) -> tuple[Evidence, ...]:
    """The candidates scored and sorted best first, with the reasons for their score."""
    weights = weights or DEFAULT_WEIGHTS
    intents = question_intents(question)
    scored: list[Evidence] = []
    for item in found:
        score = 0.0
        reasons: list[str] = []
        if item.vector_rank is not None:
            score += weights.vector / (RRF_K + item.vector_rank)
            reasons.append(f"vector#{item.vector_rank}")
        if item.keyword_rank is not None:
            score += weights.keyword / (RRF_K + item.keyword_rank)
            reasons.append(f"keyword#{item.keyword_rank}")
        hint_reasons = hints.reasons_for(item)
        for reason in hint_reasons:
            kind = reason.split(":", 1)[0]
            bonus = {
                "service": weights.service,
                "named": weights.exact_name,
                "named-in-words": weights.loose_name,
            }[kind]
            score += bonus * _FIRST
        kinds = section_intents(item)
        score += weights.section_prior(kinds) * _FIRST
        matched_intents = intents & kinds
        if matched_intents:
            score += weights.intent * _FIRST
            reasons.append("intent:" + ",".join(sorted(matched_intents)))
        scored.append(replace(item, score=score, hit_reasons=(*reasons, *hint_reasons)))
    supported = _with_document_support(scored, weights.document)
    supported.sort(key=lambda e: (-e.score, -e.cosine, e.chunk_id))
    return tuple(supported)


def _with_document_support(scored: list[Evidence], share: float) -> list[Evidence]:
    """Add ``share`` of the best *other* chunk of the same runbook to each chunk's score."""
    if share <= 0:
        return scored
    best_two: dict[str, list[float]] = {}
    for item in scored:
        top = best_two.setdefault(item.document_id, [])
        top.append(item.score)
        top.sort(reverse=True)
        del top[2:]
    supported = []
    for item in scored:
        top = best_two[item.document_id]
        if item.score < top[0]:
            other = top[0]
        else:
            other = top[1] if len(top) > 1 else 0.0
        supported.append(replace(item, score=item.score + share * other))
    return supported
