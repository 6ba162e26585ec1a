"""The learned ranker: a linear score over each candidate's features
(``rag.retrieval.rank_features``).

Two sets of weights over the same features, both data fitted on the dev split by pairwise
logistic models and stored in ``rag/retrieval/rank_model.json`` with the embedding model they were
fitted for; ``python -m rag.gate_fit --ranking`` refits them
(docs/how-it-works.md, "How the gate was calibrated"):

- ``weights`` order every candidate (the gold section against every other candidate of its
  question): mostly they learn which runbook answers;
- ``section_weights`` then order each runbook's own chunks among the places the first order
  gave that runbook (fitted on the gold section against its own runbook's other sections
  only): which section of the runbook answers. Features that are the same for every chunk of
  a runbook cancel out there, so it weighs only what tells sections apart.

A question that asks what to do, whose first runbook was placed by a section of no kind
(an aside such as "Known failure modes › …"), does not open on that aside in a runbook that
has a Mitigation section (``first_runbook_opens_with``), and gets the runbook whose opening
section scores best (``best_opening_first``). The runbook of an alert the question names
(``ScopeHints.alert_document``) opens the answer (``document_first``), and a question that
asks whom to page opens it on its escalation section (``rag.retrieval.escalation``).
Placeholder sections (``rag.retrieval.rank.is_placeholder``: TODO, N/A) go to the end of the
list whatever they score.
Deterministic: ties break on cosine, then chunk id.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from importlib import resources
from operator import mul
from pathlib import Path

from rag.errors import ConfigurationError
from rag.retrieval.escalation import (
    about_the_question,
    asks_escalation,
    is_escalation_section,
    says_whom_to_escalate,
)
from rag.retrieval.evidence import Evidence
from rag.retrieval.rank import (
    ScopeHints,
    is_placeholder,
    question_intents,
    section_headings,
    section_intents,
    sectioned_documents,
    under_section_word,
)
from rag.retrieval.rank_features import FEATURES, candidate_features

logger = logging.getLogger(__name__)

# How far down the list a question asking whom to page looks for a section that says so, when
# the first runbook has none.
_ESCALATION_REACH = 5


@dataclass(frozen=True)
class RankModel:
    embedding_model: str
    weights: tuple[float, ...]
    section_weights: tuple[float, ...]

    @classmethod
    def load(cls, path: Path | None = None) -> RankModel:
        try:
            if path is None:
                text = (
                    resources.files("rag.retrieval").joinpath("rank_model.json").read_text("utf-8")
                )
            else:
                text = path.read_text(encoding="utf-8")
            data = json.loads(text)
            weights = tuple(float(data["weights"][name]) for name in FEATURES)
            sections = tuple(float(data["section_weights"][name]) for name in FEATURES)
            return cls(str(data["embedding_model"]), weights, sections)
        except (OSError, ValueError, KeyError, TypeError) as exc:
            # A KeyError or a JSON error alone does not say which file was wrong; the path does.
            where = "rag/retrieval/rank_model.json" if path is None else str(path)
            raise ConfigurationError(
                f"cannot read the ranking model {where}: {type(exc).__name__}: {exc}"
            ) from exc

    # ``map(mul, …)`` adds the same products in the same order as a generator would (the
    # same float), without a Python frame per feature; the length check is zip's strict=True.
    def score(self, row: Sequence[float]) -> float:
        _same_length(self.weights, row)
        return float(sum(map(mul, self.weights, row)))

    def section_score(self, row: Sequence[float]) -> float:
        _same_length(self.section_weights, row)
        return float(sum(map(mul, self.section_weights, row)))


def _same_length(weights: Sequence[float], row: Sequence[float]) -> None:
    if len(weights) != len(row):
        raise ValueError(f"{len(row)} features for {len(weights)} weights")


@lru_cache(maxsize=1)
def shipped_model() -> RankModel:
    """``rag/retrieval/rank_model.json``, read once."""
    return RankModel.load()


def fuse(
    found: Sequence[Evidence],
    hints: ScopeHints,
    question: str,
    *,
    term_df: Mapping[str, int],
    tenant_chunks: int,
    model: RankModel | None = None,
    opening: bool = True,
) -> tuple[Evidence, ...]:
    """The candidates scored and sorted best first, with the reasons for their place; without
    ``opening``, in the first order alone (what the gate reads: which section a runbook shows
    first, and which runbook opens, say what to show, not whether the runbooks answer)."""
    scoring = _score(found, hints, question, term_df, tenant_chunks, model)
    return _ordered(scoring, opening=opening)


def fuse_both(
    found: Sequence[Evidence],
    hints: ScopeHints,
    question: str,
    *,
    term_df: Mapping[str, int],
    tenant_chunks: int,
    model: RankModel | None = None,
) -> tuple[tuple[Evidence, ...], tuple[Evidence, ...]]:
    """``fuse`` with and without ``opening``, the candidates scored once for both."""
    scoring = _score(found, hints, question, term_df, tenant_chunks, model)
    return _ordered(scoring, opening=True), _ordered(scoring, opening=False)


@dataclass(frozen=True)
class _Scoring:
    scored: list[Evidence]  # best first
    section_scores: dict[int, float]
    placeholder: dict[int, bool]
    intents: frozenset[str]
    sectioned: frozenset[str]
    # The runbook of the alert the question names (``ScopeHints.alert_document``).
    alert_document: str | None = None
    # Whether the question asks whom to page (``rag.retrieval.escalation``).
    escalation: bool = False


def _score(
    found: Sequence[Evidence],
    hints: ScopeHints,
    question: str,
    term_df: Mapping[str, int],
    tenant_chunks: int,
    model: RankModel | None,
) -> _Scoring:
    model = model or shipped_model()
    rows = candidate_features(found, hints, question, term_df=term_df, tenant_chunks=tenant_chunks)
    intents = question_intents(question)
    sectioned = sectioned_documents(found)
    scored = []
    section_scores = {}
    placeholder = {}
    for item, row in zip(found, rows, strict=True):
        reasons = []
        if item.vector_rank is not None:
            reasons.append(f"vector#{item.vector_rank}")
        if item.keyword_rank is not None:
            reasons.append(f"keyword#{item.keyword_rank}")
        matched_intents = intents & section_intents(item, intents, sectioned)
        if matched_intents:
            reasons.append("intent:" + ",".join(sorted(matched_intents)))
        placeholder[item.chunk_id] = is_placeholder(item.content)
        if placeholder[item.chunk_id]:
            reasons.append("placeholder")
        scored.append(item.ranked(model.score(row), (*reasons, *hints.reasons_for(item))))
        section_scores[item.chunk_id] = model.section_score(row)
    scored.sort(key=lambda e: (-e.score, -e.cosine, e.chunk_id))
    return _Scoring(
        scored,
        section_scores,
        placeholder,
        intents,
        sectioned,
        alert_document=hints.alert_document,
        escalation=asks_escalation(question),
    )


def _ordered(scoring: _Scoring, *, opening: bool) -> tuple[Evidence, ...]:
    scored, section_scores, placeholder = (
        scoring.scored,
        scoring.section_scores,
        scoring.placeholder,
    )
    intents, sectioned = scoring.intents, scoring.sectioned
    alert_document = scoring.alert_document
    documents = [e.document_id for e in scored]
    order = list(range(len(scored)))
    if opening:
        order = sections_in_place(documents, [section_scores[e.chunk_id] for e in scored])
    if (
        opening
        and "mitigation" in intents
        and order
        and not section_intents(scored[0], intents, sectioned)
    ):
        # A runbook opens the answer with the section the section weights chose for it. When a
        # question asks what to do and the runbook was placed first by a section that is no
        # procedure (nor diagnosis, nor impact), a runbook written in the usual sections opens
        # with its Mitigation, not with that aside; and then the runbook whose opening section
        # is best by both orders opens the answer: "how do I fail over the payments database?"
        # opened on the gateway runbook's PSP failover, or on the aside itself, because its
        # "Known failure modes › Database failover in progress" ranked first.
        if order[0] == 0:
            usual = [under_section_word(e, "mitigation") for e in scored]
            order = first_runbook_opens_with(order, documents, usual)
        if order[0] != 0:
            both = [e.score + section_scores[e.chunk_id] for e in scored]
            order = best_opening_first(order, documents, both)
    if opening and order and alert_document is not None:
        # The alert the question names is what fired: its runbook opens the answer whatever
        # workload or host names come with it ("KubePodCrashLooping on alertmanager-main-0"
        # is not an Alertmanager question); the workload's own runbook may follow.
        order = document_first(order, documents, alert_document)
    if (
        opening
        and order
        and intents == {"mitigation"}
        and "mitigation" not in section_intents(scored[order[0]], intents, sectioned)
    ):
        # A question that asks only what to do ("… what do we do about it") and whose runbook
        # opens on its Meaning, Impact or Diagnosis opens instead on that runbook's Mitigation
        # when the runbook is written in the usual sections (one that heads its parts by what
        # they do keeps the section weights' choice: that lost dev rows, round 10).
        usual = [under_section_word(e, "mitigation") for e in scored]
        order = first_runbook_opens_with(order, documents, usual)
    if opening and order and intents == {"impact"}:
        # "why should I care", "what happens to the pods if we ignore it": the question asks
        # for the Impact alone, and a runbook's Impact rarely restates the alert's subject, so
        # its Meaning or Mitigation outscores it on shared words. The first runbook opens with
        # its Impact when one is among the candidates. (The same for Diagnosis alone lost dev
        # rows; for Meaning alone it moved no dev row and cost test rows: docs/answer-quality.md,
        # round 10.)
        impact = ["impact" in section_intents(e, intents, sectioned) for e in scored]
        if not impact[order[0]]:
            order = first_runbook_opens_with(order, documents, impact)
    if opening and order and scoring.escalation:
        # "who do I page for …": the lead runbook opens on its escalation or contacts section,
        # else on a section that says whom to page or escalate to (the answer names the
        # runbook's owner when it has neither, ``rag.service``).
        heads = [is_escalation_section(e, section_headings(e)) for e in scored]
        says = [says_whom_to_escalate(e) for e in scored]
        # A section headed as escalation or contacts ("Contact Numbers") says more than a
        # runbook whose own name does ("Cloudflare for the on-call", its preamble).
        named = [heads[i] and bool(section_headings(e)) for i, e in enumerate(scored)]
        told = [heads[i] or says[i] for i in range(len(scored))]
        # Another runbook's section leads only when it is about what is asked.
        on_topic = [about_the_question(e) for e in scored]
        opened = first_runbook_opens_with(order, documents, named)
        if not named[opened[0]]:
            near_named = [named[i] and on_topic[i] for i in range(len(scored))]
            opened = _escalation_near(
                order, near_named, alert_document
            ) or first_runbook_opens_with(order, documents, told)
        if not told[opened[0]]:
            # The first runbook says nothing about whom to page; a runbook close behind it
            # that does opens the answer ("about to roll back the app, who do I page first":
            # a credential rotation's "Roll-back" came first, the rollback runbook that says
            # "Page the IMOC" second).
            near_told = [told[i] and on_topic[i] for i in range(len(scored))]
            opened = _escalation_near(order, near_told, alert_document) or opened
        order = opened
    order = placeholders_last(order, [placeholder[e.chunk_id] for e in scored])
    # A chunk takes the score of the place it moves into, so scores still fall down the list.
    return tuple(
        scored[moved] if moved == place else replace(scored[moved], score=scored[place].score)
        for place, moved in enumerate(order)
    )


def best_opening_first(
    order: Sequence[int], documents: Sequence[str], scores: Sequence[float]
) -> list[int]:
    """``order`` with the opening section (a runbook's first item in ``order``) that scores
    best moved to the front; ties keep the earlier one."""
    openings: dict[str, int] = {}
    for index in order:
        openings.setdefault(documents[index], index)
    best = max(openings.values(), key=lambda i: (scores[i], -order.index(i)))
    return [best, *(i for i in order if i != best)]


def _escalation_near(
    order: Sequence[int], chosen: Sequence[bool], alert_document: str | None
) -> list[int] | None:
    """``order`` with the first ``chosen`` item among its first places moved to the front;
    None when there is none, or when the question names an alert (its runbook keeps its
    place)."""
    if alert_document is not None:
        return None
    near = next((i for i in order[:_ESCALATION_REACH] if chosen[i]), None)
    if near is None:
        return None
    return [near, *(i for i in order if i != near)]


def document_first(order: Sequence[int], documents: Sequence[str], document: str) -> list[int]:
    """``order`` with ``document``'s first item moved to the front (the rest keep their
    order); unchanged when the document has no item."""
    lead = next((i for i in order if documents[i] == document), None)
    if lead is None:
        return list(order)
    return [lead, *(i for i in order if i != lead)]


def first_runbook_opens_with(
    order: Sequence[int], documents: Sequence[str], chosen: Sequence[bool]
) -> list[int]:
    """``order`` with the first runbook's first ``chosen`` item moved to the front of that
    runbook's places (its other items follow in order; other runbooks keep theirs); unchanged
    when it has none."""
    first = documents[order[0]]
    own = [i for i in order if documents[i] == first]
    lead = next((i for i in own if chosen[i]), None)
    if lead is None:
        return list(order)
    refill = iter([lead, *(i for i in own if i != lead)])
    return [next(refill) if documents[i] == first else i for i in order]


def placeholders_last(order: Sequence[int], placeholder: Sequence[bool]) -> list[int]:
    """``order`` with the indices of placeholder items moved to its end, both in order."""
    return [i for i in order if not placeholder[i]] + [i for i in order if placeholder[i]]


def sections_in_place(documents: Sequence[str], section_scores: Sequence[float]) -> list[int]:
    """Indices of a ranked list reordered so that each document keeps the places it holds
    and fills them with its own items by section score (best first; ties keep list order)."""
    by_document: dict[str, list[int]] = {}
    for index, document in enumerate(documents):
        by_document.setdefault(document, []).append(index)
    queues = {
        document: iter(sorted(indices, key=lambda i: (-section_scores[i], i)))
        for document, indices in by_document.items()
    }
    return [next(queues[document]) for document in documents]
