"""A gap's label: the alert its questions name, and the terms that set its questions apart.

A term labels a group when at least half of its questions use it (two at least, in a group of
two or more), weighted by how rare it is among the tenant's other gaps and in the tenant's own
runbooks (a word most runbooks use, "pod", "service", names no gap). Words from alert names
count too, split at their humps: ``ElasticsearchClusterRed`` says elasticsearch, cluster, red;
so do the tenant's service names a question used (``kafka``).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from bot.core.answers.topics import ALERT, SERVICE, TERM, normalise_term, topic_kind, topic_label

MAX_TERMS = 3
# A term in more than this share of the tenant's runbook chunks is everyday vocabulary there.
GENERIC_SHARE = 0.2
_HUMPS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")


@dataclass(frozen=True)
class Label:
    text: str
    kind: str  # "alert", "terms" or "none"
    alert: str | None
    terms: tuple[str, ...]


@dataclass(frozen=True)
class TermRarity:
    """How often terms occur in the tenant's runbooks and across all of its open gaps."""

    runbook_df: dict[str, int]
    chunks: int
    groups_with: Counter[str]
    groups: int

    def weight(self, term: str) -> float:
        across = math.log((self.groups + 1) / (self.groups_with[term] + 0.5))
        df = self.runbook_df.get(term, 0)
        in_runbooks = math.log((self.chunks + 1) / (df + 1)) if self.chunks else 1.0
        return max(across, 0.1) * max(in_runbooks, 0.1)

    def generic(self, term: str) -> bool:
        return bool(self.chunks) and self.runbook_df.get(term, 0) > GENERIC_SHARE * self.chunks


def group_terms(topics: Sequence[Sequence[str]]) -> Counter[str]:
    """In how many of the questions each term occurs (alert-name words included)."""
    counts: Counter[str] = Counter()
    for question in topics:
        counts.update(set(_terms(question)))
    return counts


def label_group(topics: Sequence[Sequence[str]], rarity: TermRarity) -> Label:
    size = len(topics)
    alerts = Counter(topic_label(t) for q in topics for t in dict.fromkeys(q) if _is_alert(t))
    alert = min(alerts, key=lambda a: (-alerts[a], a)) if alerts else None
    counts = group_terms(topics)
    needed = max(2 if size > 1 else 1, math.ceil(size / 2))
    chosen = [term for term, n in counts.items() if n >= needed and not rarity.generic(term)]
    chosen.sort(key=lambda t: (-counts[t] * rarity.weight(t), t))
    terms = tuple(chosen[:MAX_TERMS])
    if terms:
        text = " · ".join(terms) + (f" ({alert})" if alert else "")
        return Label(text, "terms", alert, terms)
    if alert is not None:
        return Label(alert, "alert", alert, ())
    return Label("", "none", None, ())


def _terms(question: Sequence[str]) -> list[str]:
    words = [topic_label(t).lower() for t in question if topic_kind(t) in (TERM, SERVICE)]
    for topic in question:
        if _is_alert(topic):
            words.extend(normalise_term(p) for p in _HUMPS.findall(topic_label(topic)))
    return [w for w in words if len(w) > 2]


def _is_alert(topic: str) -> bool:
    return topic_kind(topic) == ALERT
