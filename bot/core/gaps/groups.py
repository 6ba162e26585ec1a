"""Open gaps: a tenant's unanswered questions grouped by meaning, minus those answered since.

Unanswered means abstained, or answered and then voted 👎 (with no 👍). Questions are grouped on
the embeddings made when they were asked (``gap_clusters``), so a group survives text retention.
A later answer closes the questions of the one group it belongs to (its mean similarity to the
group clears the same threshold) when it got a 👍, or no vote for ``quiet_days``; a group also
loses the questions whose runbook (cited, or nearest and near) has changed since.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import dataclass
from datetime import datetime, timedelta

import numpy as np

from bot.core.gaps.clusters import cluster, mean_similarity, unit_rows
from bot.core.gaps.data import GapInputs
from bot.core.gaps.labels import Label, TermRarity, group_terms, label_group
from bot.core.gaps.rows import DocumentRow, FactRow
from bot.core.gaps.thresholds import GapThresholds


@dataclass(frozen=True)
class OpenGap:
    id: str
    facts: list[FactRow]  # the open questions, oldest first
    downvoted: int  # of them, answers that got 👎
    label: Label
    nearest: str | None  # shown only when its similarity clears the fitted threshold
    nearest_similarity: float | None  # the best runbook's, shown or not


@dataclass(frozen=True)
class Outcomes:
    """Which answered questions got 👎 (and no 👍), and which count as answered well."""

    downvoted: frozenset[str]
    upvoted: frozenset[str]

    @classmethod
    def of(cls, inputs: GapInputs) -> Outcomes:
        down = {v.answer_id for v in inputs.votes if v.value == "down"}
        up = {v.answer_id for v in inputs.votes if v.value == "up"}
        return cls(frozenset(down - up), frozenset(up))

    def unanswered(self, fact: FactRow) -> bool:
        return fact.status == "abstained" or fact.answer_id in self.downvoted

    def closes(self, fact: FactRow, *, now: datetime, quiet_days: int) -> bool:
        if fact.status != "answered" or fact.answer_id in self.downvoted:
            return False
        quiet = fact.created_at <= now - timedelta(days=quiet_days)
        return fact.answer_id in self.upvoted or quiet


def open_gaps(
    inputs: GapInputs, *, thresholds: GapThresholds, now: datetime, quiet_days: int
) -> list[OpenGap]:
    outcomes = Outcomes.of(inputs)
    asked = [
        f
        for f in inputs.facts
        if outcomes.unanswered(f)
        and not runbook_changed(f, inputs.documents, thresholds.nearest_similarity)
    ]
    closers = [f for f in inputs.facts if outcomes.closes(f, now=now, quiet_days=quiet_days)]
    model = _main_model(asked)
    groups = _groups(asked, model, thresholds.cluster_similarity)
    still_open = []
    for members in groups:
        closed_until = _closed_until(members, closers, model, thresholds.cluster_similarity)
        remaining = [f for f in members if closed_until is None or f.created_at > closed_until]
        if remaining:
            still_open.append(remaining)
    rarity = TermRarity(
        runbook_df=inputs.term_df,
        chunks=inputs.chunks,
        groups_with=Counter(
            t for members in still_open for t in group_terms([f.topics for f in members])
        ),
        groups=len(still_open),
    )
    gaps = [_gap(members, outcomes, rarity, thresholds) for members in still_open]
    return sorted(gaps, key=lambda g: (-len(g.facts), g.label.kind == "none", g.id))


def runbook_changed(
    fact: FactRow, documents: dict[str, DocumentRow], near_similarity: float
) -> bool:
    """The runbook the question pointed at (cited, or near enough) changed or was removed."""
    if not fact.documents or not fact.versions:
        return False
    if fact.cosines and fact.status == "abstained" and fact.cosines[0] < near_similarity:
        return False  # a far runbook was never this question's answer
    current = documents.get(fact.documents[0])
    return current is None or current.version != fact.versions[0]


def _main_model(facts: list[FactRow]) -> str | None:
    models = Counter(f.embedding_model for f in facts if _has_vector(f))
    return models.most_common(1)[0][0] if models else None


def _has_vector(fact: FactRow) -> bool:
    return fact.embedding is not None and fact.embedding_model is not None


def _groups(facts: list[FactRow], model: str | None, threshold: float) -> list[list[FactRow]]:
    """Facts of the main model clustered; any other (asked before vectors were kept) alone."""
    embedded = [f for f in facts if _has_vector(f) and f.embedding_model == model]
    vectors = [f.embedding for f in embedded if f.embedding is not None]
    groups = [[embedded[i] for i in g] for g in cluster(vectors, threshold)]
    groups += [[f] for f in facts if not (_has_vector(f) and f.embedding_model == model)]
    return [sorted(g, key=lambda f: f.created_at) for g in groups]


def _closed_until(
    members: list[FactRow], closers: list[FactRow], model: str | None, threshold: float
) -> datetime | None:
    """When the newest answer that belongs to this group was given, if any."""
    vectors = [f.embedding for f in members if _has_vector(f) and f.embedding_model == model]
    if not vectors:
        return None
    group = unit_rows(np.asarray(vectors))
    first = members[0].created_at
    belonging = [
        c.created_at
        for c in closers
        if c.created_at > first
        and c.embedding is not None
        and c.embedding_model == model
        and mean_similarity(c.embedding, group) >= threshold
    ]
    return max(belonging, default=None)


def _gap(
    members: list[FactRow], outcomes: Outcomes, rarity: TermRarity, thresholds: GapThresholds
) -> OpenGap:
    best: dict[str, float] = {}
    for fact in members:
        for document_id, cosine in zip(fact.documents, fact.cosines, strict=False):
            best[document_id] = max(best.get(document_id, -1.0), cosine)
    nearest = min(best, key=lambda d: (-best[d], d)) if best else None
    similarity = best[nearest] if nearest is not None else None
    shown = similarity is not None and similarity >= thresholds.nearest_similarity
    digest = hashlib.sha256(members[0].answer_id.encode()).hexdigest()[:8]
    return OpenGap(
        id=f"g-{digest}",
        facts=members,
        downvoted=sum(f.answer_id in outcomes.downvoted for f in members),
        label=label_group([f.topics for f in members], rarity),
        nearest=nearest if shown else None,
        nearest_similarity=round(similarity, 3) if similarity is not None else None,
    )
