"""Fit the learned ranker's weights (``rag/retrieval/rank_model.json``) on observed dev retrievals.

A pairwise logistic model: for every answerable question whose gold section is among the
candidates, each gold row minus each other candidate's row is a positive example (and its
negation a negative one), so the weights learn what puts the gold section above the rest of
*its own* list. Placeholder sections (TODO, N/A) take no part: the ranker puts them last
whatever they score. The section weights are a second pairwise model over the gold row against the
other chunks of its own runbook only (``rag.retrieval.ranker``: they order each runbook's chunks
within
its places). The fit is reported with its MRR@5 under five-fold cross-validation grouped by
question (folds by a hash of the question id: deterministic), beside the in-sample figure, the
cross-validated figure of the first order alone, and the figure held out one tenant at a time
(fitted on the other tenants' questions): the hidden evaluation is other collections, so that
is the check that the weights carry to runbooks they never saw. Called by
``python -m rag.gate_fit --ranking``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from rag.evaluation.evaluate import GoldenQuestion
from rag.evaluation.logistic import fit_logistic
from rag.retrieval.evidence import Evidence
from rag.retrieval.rank import RRF_K, ScopeHints, is_placeholder
from rag.retrieval.rank_features import FEATURES, candidate_features
from rag.retrieval.ranker import placeholders_last, sections_in_place
from rag.retrieval.retrieve import Candidates

# Stronger than the gate's penalty: 20 weights from a few thousand correlated pairs.
RANK_L2 = 30.0
# The section weights learn from a few hundred pairs (a gold section against its own runbook's
# other sections); at 30 the pull of an asked kind seen in a dozen questions (Impact) shrank
# below a procedure's default pull. On dev, cross-validated by question / held out by tenant:
# MRR@5 0.846 / 0.834 at 3, against 0.833 / 0.823 at 10 and 0.828 / 0.816 at 30.
SECTION_L2 = 3.0
FOLDS = 5
# Features that say which section of a runbook answers, not which runbook: only the section
# weights read them. A long section is the substantive one of its runbook, but a long passage
# is no likelier the right document (held out, MT-RAG's recall@5 fell 0.79 -> 0.77 when the
# first order read it too, and no runbook tenant gained). The kinds asked for (``match_*``,
# ``other_*``) read by the first order too cost MT-RAG held out by tenant (MRR@5 0.687 -> 0.673).
SECTION_ONLY = (
    "content_length",
    *(name for name in FEATURES if name.startswith(("match_", "other_"))),
)
# ...and the first order's coarser reading of the same: whether the section is of a kind the
# question asks for, and its kind whatever was asked. The section weights read the kinds per
# asked kind instead (``intent_match`` and ``kind_*`` are sums of those columns).
FIRST_ONLY = ("intent_match", *(name for name in FEATURES if name.startswith("kind_")))
_SECTION_ONLY = np.array([name in SECTION_ONLY for name in FEATURES])
_FIRST_ONLY = np.array([name in FIRST_ONLY for name in FEATURES])
# Gold rows per question that enter the pairs (a section split in several chunks would
# otherwise outweigh a question with one).
_GOLD_PER_QUESTION = 2


@dataclass(frozen=True)
class RankingCase:
    """One answerable question's candidates as feature rows, which rows are gold, the document
    of each row, and the tenant asked."""

    question_id: str
    rows: np.ndarray
    gold: np.ndarray
    documents: tuple[str, ...]
    tenant: str
    placeholder: np.ndarray


def ranking_case(
    golden: GoldenQuestion, candidates: Candidates, hints: ScopeHints, query: str
) -> RankingCase:
    # In plain Reciprocal Rank Fusion order, not the order of the ranker that retrieved them:
    # the fit must not depend on the weights it replaces (the gold rows that enter the pairs
    # are the ones both retrievers found best).
    evidence = sorted(candidates.evidence, key=lambda e: (-_plain_rrf(e), e.chunk_id))
    rows = candidate_features(
        evidence,
        hints,
        query,
        term_df=candidates.ranking_df,
        tenant_chunks=candidates.tenant_chunks,
    )
    targets = golden.targets()
    gold = [any(t.matches(e) for t in targets) for e in evidence]
    return RankingCase(
        golden.id,
        np.array(rows, dtype=float).reshape(-1, len(FEATURES)),
        np.array(gold, dtype=bool),
        tuple(e.document_id for e in evidence),
        golden.tenant,
        np.array([is_placeholder(e.content) for e in evidence], dtype=bool),
    )


def _plain_rrf(evidence: Evidence) -> float:
    return sum(1.0 / (RRF_K + r) for r in (evidence.vector_rank, evidence.keyword_rank) if r)


def fit_ranking(cases: Sequence[RankingCase], l2: float = RANK_L2) -> np.ndarray:
    """Pairwise logistic weights, one per feature of ``FEATURES`` (0 for the section-only ones)."""
    pairs = []
    for case in cases:
        competing = ~case.placeholder
        others = case.rows[~case.gold & competing]
        for row in case.rows[case.gold & competing][:_GOLD_PER_QUESTION]:
            pairs.append(row - others)
    if pairs:
        # A zero column gets a zero weight under the penalty: the first order never reads it.
        pairs = [np.where(_SECTION_ONLY, 0.0, p) for p in pairs]
    return _pairwise_fit(pairs, l2)


def fit_sections(cases: Sequence[RankingCase], l2: float = SECTION_L2) -> np.ndarray:
    """Pairwise logistic section weights: each gold row against its own runbook's other rows
    (0 for the first-order-only features)."""
    pairs = []
    for case in cases:
        documents = np.array(case.documents, dtype=object)
        for index in np.flatnonzero(case.gold & ~case.placeholder)[:_GOLD_PER_QUESTION]:
            siblings = (documents == documents[index]) & ~case.gold & ~case.placeholder
            pairs.append(np.where(_FIRST_ONLY, 0.0, case.rows[index] - case.rows[siblings]))
    return _pairwise_fit(pairs, l2)


def _pairwise_fit(pairs: list[np.ndarray], l2: float) -> np.ndarray:
    if not pairs or not sum(len(p) for p in pairs):
        return np.zeros(len(FEATURES))
    above = np.vstack(pairs)
    x = np.vstack([above, -above])
    y = np.concatenate([np.ones(len(above)), np.zeros(len(above))])
    weights, _ = fit_logistic(x, y, l2)
    return weights


def reciprocal_rank(
    case: RankingCase,
    weights: np.ndarray,
    section_weights: np.ndarray | None = None,
    k: int = 5,
) -> float:
    if case.rows.size == 0:
        return 0.0
    # Stable on ties, like the shipped ranker's order of the candidates it was handed.
    order = [int(i) for i in np.argsort(-(case.rows @ weights), kind="stable")]
    if section_weights is not None:
        section_scores = case.rows[order] @ section_weights
        documents = [case.documents[i] for i in order]
        order = [order[i] for i in sections_in_place(documents, section_scores.tolist())]
    order = placeholders_last(order, case.placeholder.tolist())
    return next((1.0 / place for place, i in enumerate(order[:k], 1) if case.gold[i]), 0.0)


def cross_validated_mrr(
    cases: Sequence[RankingCase],
    l2: float = RANK_L2,
    *,
    section_l2: float = SECTION_L2,
    sections: bool = True,
) -> float:
    """MRR@5 under five-fold cross-validation grouped by question."""
    folds = [int(hashlib.sha256(c.question_id.encode()).hexdigest(), 16) % FOLDS for c in cases]
    return _held_out_mrr(cases, folds, (l2, section_l2), sections)


def tenant_held_out_mrr(
    cases: Sequence[RankingCase],
    l2: float = RANK_L2,
    *,
    section_l2: float = SECTION_L2,
    sections: bool = True,
) -> float:
    """MRR@5 with each tenant's questions ranked by weights fitted on the other tenants only."""
    return _held_out_mrr(cases, [c.tenant for c in cases], (l2, section_l2), sections)


def _held_out_mrr(
    cases: Sequence[RankingCase],
    folds: Sequence[object],
    penalties: tuple[float, float],
    sections: bool,
) -> float:
    total = 0.0
    for held_out in set(folds):
        fitting = [c for c, f in zip(cases, folds, strict=True) if f != held_out]
        weights = fit_ranking(fitting, penalties[0])
        section_weights = fit_sections(fitting, penalties[1]) if sections else None
        total += sum(
            reciprocal_rank(c, weights, section_weights)
            for c, f in zip(cases, folds, strict=True)
            if f == held_out
        )
    return total / max(len(cases), 1)


def rank_model(cases: Sequence[RankingCase], model_id: str, sources: list[str]) -> dict[str, Any]:
    """The JSON stored as ``rag/retrieval/rank_model.json``."""
    weights = fit_ranking(cases)
    section_weights = fit_sections(cases)
    in_sample = sum(reciprocal_rank(c, weights, section_weights) for c in cases) / len(cases)
    return {
        "embedding_model": model_id,
        "weights": _named(weights),
        "section_weights": _named(section_weights),
        "fitted_on": {
            "files": sources,
            "questions": len(cases),
            "l2": RANK_L2,
            "section_l2": SECTION_L2,
            "mrr_at_5": round(in_sample, 4),
            "cross_validated_mrr_at_5": round(cross_validated_mrr(cases), 4),
            "cross_validated_mrr_at_5_without_sections": round(
                cross_validated_mrr(cases, sections=False), 4
            ),
            "tenant_held_out_mrr_at_5": round(tenant_held_out_mrr(cases), 4),
        },
    }


def _named(weights: np.ndarray) -> dict[str, float]:
    return {name: round(float(w), 4) for name, w in zip(FEATURES, weights, strict=True)}
