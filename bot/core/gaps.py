"""The gap report: unanswered questions by topic, 👎 by runbook, stale runbooks in use.

Built from ``answer_facts`` and votes, so it keeps working after text retention; questions are
shown as examples only while their text is retained. A gap closes when the runbook it points
to changes (a new version) or a later question on the same topic is answered.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass
from datetime import datetime, timedelta

from bot.core.feedback_reasons import REASONS
from bot.core.gaps_data import DocumentRow, FactRow, GapInputs, load_gap_inputs
from bot.core.topics import ALERT, SERVICE, TERM, topic_kind, topic_label
from rag import Store, age_in_days

EXAMPLES = 3
OTHER = "other"
# Primary topic of an unanswered question: the most specific label it carries.
_KIND_ORDER = (ALERT, SERVICE, TERM)


@dataclass(frozen=True)
class Gap:
    topic: str  # "alert:KubePodCrashLooping", "term:certificate" or "other"
    kind: str
    label: str
    count: int
    examples: list[str]
    nearest_runbooks: list[str]
    last_asked: str


@dataclass(frozen=True)
class DownvotedRunbook:
    document_id: str
    title: str
    down: int
    reasons: dict[str, int]


@dataclass(frozen=True)
class StaleRunbook:
    document_id: str
    title: str
    updated: str | None
    age_days: int
    answers: int


@dataclass(frozen=True)
class RunbookScore:
    document_id: str
    title: str
    answered: int
    up: int
    down: int
    helpful_share: float | None  # 👍 / (👍 + 👎)


@dataclass(frozen=True)
class GapReport:
    tenant: str
    since: str
    generated_at: str
    stale_after_days: int
    totals: dict[str, int]
    gaps: list[Gap]
    downvoted: list[DownvotedRunbook]
    stale: list[StaleRunbook]
    runbooks: list[RunbookScore]

    def as_json(self) -> dict[str, object]:
        return asdict(self)


async def gap_report(
    store: Store, tenant: str, *, since: timedelta, stale_after_days: int, now: datetime
) -> GapReport:
    inputs = await load_gap_inputs(store, tenant, since=now - since)
    return build_report(
        tenant, inputs, since=now - since, now=now, stale_after_days=stale_after_days
    )


def build_report(
    tenant: str, inputs: GapInputs, *, since: datetime, now: datetime, stale_after_days: int
) -> GapReport:
    answered = [f for f in inputs.facts if f.status == "answered"]
    abstained = [f for f in inputs.facts if f.status == "abstained"]
    gaps = open_gaps(abstained, answered, inputs.documents)
    votes = Counter(v.value for v in inputs.votes)
    totals = {
        "questions": len(inputs.facts),
        "answered": len(answered),
        "abstained": len(abstained),
        "open_gaps": sum(g.count for g in gaps),
        "up": votes["up"],
        "down": votes["down"],
    }
    return GapReport(
        tenant=tenant,
        since=since.isoformat(timespec="seconds"),
        generated_at=now.isoformat(timespec="seconds"),
        stale_after_days=stale_after_days,
        totals=totals,
        gaps=gaps,
        downvoted=_downvoted(inputs),
        stale=_stale(answered, inputs.documents, stale_after_days, now),
        runbooks=_scores(answered, inputs),
    )


def open_gaps(
    abstained: list[FactRow], answered: list[FactRow], documents: dict[str, DocumentRow]
) -> list[Gap]:
    """Unanswered questions still open, grouped by their most specific shared topic."""
    candidates = [f for f in abstained if not _runbook_changed(f, documents)]
    shared = Counter(t for f in candidates for t in set(f.topics) if topic_kind(t) == TERM)
    groups: dict[str, list[FactRow]] = {}
    for fact in candidates:
        topic = _primary_topic(fact, shared)
        if topic != OTHER and any(
            a.created_at > fact.created_at and topic in a.topics for a in answered
        ):
            continue  # a later question on the same topic was answered
        groups.setdefault(topic, []).append(fact)
    gaps = [_gap(topic, facts) for topic, facts in groups.items()]
    return sorted(gaps, key=lambda g: (g.topic == OTHER, -g.count, g.topic))


def _primary_topic(fact: FactRow, shared: Counter[str]) -> str:
    for kind in _KIND_ORDER[:2]:
        for topic in fact.topics:
            if topic_kind(topic) == kind:
                return topic
    terms = [t for t in fact.topics if topic_kind(t) == TERM and shared[t] >= 2]
    if not terms:
        return OTHER
    return min(terms, key=lambda t: (-shared[t], t))


def _runbook_changed(fact: FactRow, documents: dict[str, DocumentRow]) -> bool:
    if not fact.documents or not fact.versions:
        return False
    current = documents.get(fact.documents[0])
    return current is None or current.version != fact.versions[0]


def _gap(topic: str, facts: list[FactRow]) -> Gap:
    newest_first = sorted(facts, key=lambda f: f.created_at, reverse=True)
    examples = [f.question for f in newest_first if f.question][:EXAMPLES]
    nearest = Counter(d for f in facts for d in f.documents[:1])
    return Gap(
        topic=topic,
        kind=topic_kind(topic) if topic != OTHER else OTHER,
        label=topic_label(topic) if topic != OTHER else "no shared topic",
        count=len(facts),
        examples=list(dict.fromkeys(examples)),
        nearest_runbooks=[d for d, _ in nearest.most_common(EXAMPLES)],
        last_asked=newest_first[0].created_at.isoformat(timespec="seconds"),
    )


def _title(document_id: str, documents: dict[str, DocumentRow]) -> str:
    row = documents.get(document_id)
    return row.title if row is not None else document_id


def _downvoted(inputs: GapInputs) -> list[DownvotedRunbook]:
    reasons: dict[str, Counter[str]] = {}
    for vote in inputs.votes:
        if vote.value != "down":
            continue
        for document_id in dict.fromkeys(vote.documents):
            reasons.setdefault(document_id, Counter())[vote.reason or "none"] += 1
    rows = [
        DownvotedRunbook(
            document_id=d,
            title=_title(d, inputs.documents),
            down=sum(counts.values()),
            reasons={r: counts[r] for r in (*REASONS, "none") if counts[r]},
        )
        for d, counts in reasons.items()
    ]
    return sorted(rows, key=lambda r: (-r.down, r.document_id))


def _stale(
    answered: list[FactRow], documents: dict[str, DocumentRow], after_days: int, now: datetime
) -> list[StaleRunbook]:
    uses = Counter(d for f in answered for d in dict.fromkeys(f.documents))
    rows = []
    for document_id, count in uses.items():
        row = documents.get(document_id)
        age = age_in_days(row.updated, today=now.date()) if row is not None else None
        if row is not None and age is not None and age > after_days:
            rows.append(StaleRunbook(document_id, row.title, row.updated, age, count))
    return sorted(rows, key=lambda r: (-r.answers, -r.age_days, r.document_id))


def _scores(answered: list[FactRow], inputs: GapInputs) -> list[RunbookScore]:
    cited = Counter(d for f in answered for d in dict.fromkeys(f.documents))
    ups: Counter[str] = Counter()
    downs: Counter[str] = Counter()
    for vote in inputs.votes:
        for document_id in dict.fromkeys(vote.documents):
            (ups if vote.value == "up" else downs)[document_id] += 1
    rows = []
    for document_id in set(cited) | set(ups) | set(downs):
        up, down = ups[document_id], downs[document_id]
        share = round(up / (up + down), 3) if up + down else None
        rows.append(
            RunbookScore(
                document_id,
                _title(document_id, inputs.documents),
                cited[document_id],
                up,
                down,
                share,
            )
        )
    return sorted(rows, key=lambda r: (-r.answered, -r.down, r.document_id))
