"""The gap report: open gaps grouped by meaning, 👎 by runbook, stale runbooks that matter.

Built from ``answer_facts`` and votes, so it keeps working after text retention; questions are
shown as examples only while their text is retained. Every row names its owner
(``gap_owners``); ``owner=`` keeps one owner's rows (``runbook gaps --owner``, the digest).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass, field, replace
from datetime import datetime, timedelta

from bot.core.gaps.data import GapInputs, load_gap_inputs
from bot.core.gaps.drafts import draft_title, render_draft
from bot.core.gaps.groups import OpenGap, Outcomes, open_gaps
from bot.core.gaps.owners import Owner, Owners, owned_by
from bot.core.gaps.rows import DocumentRow, FactRow
from bot.core.gaps.thread_drafts import DRAFT_OPEN, ClosedGap, closing_runbook, draft_of
from bot.core.gaps.thresholds import GapThresholds, load_gap_thresholds
from bot.core.owners.feedback_reasons import REASONS
from rag import Store, age_in_days

EXAMPLES = 3
DRAFT_QUESTIONS = 20
# An answer with no vote for this many days counts as answered well (it closes its gap).
QUIET_DAYS = 3
# Whose runbook a 👎 counts against, as the page and the JSON say it.
VOTE_RULE = "a vote counts for or against the runbook its answer opened with (first citation)"


@dataclass(frozen=True)
class Gap:
    id: str  # "g-1a2b3c4d", for `runbook gaps --draft`
    label: str  # distinctive terms and alert name, or "" when the questions share none
    kind: str  # "terms", "alert" or "none"
    count: int
    abstained: int
    downvoted: int  # answered, then 👎
    examples: list[str]
    nearest_runbook: str | None  # only when its similarity clears the fitted threshold
    nearest_title: str | None
    nearest_similarity: float | None  # the best runbook's, shown or not
    owner: str
    owner_target: str | None
    owner_source: str  # "runbook", "service", "default" or "none"
    service: str | None
    first_asked: str
    last_asked: str
    draft: str | None  # a Markdown skeleton when no runbook is near
    # "draft open" when a runbook was drafted from a thread its questions were asked in.
    thread_draft: str | None = None
    thread_draft_link: str | None = None
    # The answer to its latest question asked in a Slack thread: the digest's "Write the
    # runbook" opens that thread's draft. Not in the JSON (``runbook gaps --json`` is a contract).
    thread_answer: str | None = None


@dataclass(frozen=True)
class DownvotedRunbook:
    document_id: str
    title: str
    down: int
    reasons: dict[str, int]  # reason → count, most frequent first
    owner: str


@dataclass(frozen=True)
class StaleRunbook:
    document_id: str
    title: str
    updated: str | None
    age_days: int
    answers: int  # answers that cited it in the period
    downvoted_answers: int  # of them, answers that got 👎
    abstained_near: int  # unanswered questions it was the near runbook of
    owner: str


@dataclass(frozen=True)
class RunbookScore:
    document_id: str
    title: str
    answered: int
    up: int
    down: int
    helpful_share: float | None  # 👍 / (👍 + 👎)
    owner: str


@dataclass(frozen=True)
class GapReport:
    tenant: str
    since: str
    generated_at: str
    stale_after_days: int
    owner: str | None  # the --owner filter, if any
    thresholds: dict[str, float]
    vote_rule: str
    # Every owner with a row here → the chat target the digest sends their rows to (or None).
    owner_targets: dict[str, str | None]
    totals: dict[str, int]
    gaps: list[Gap]
    downvoted: list[DownvotedRunbook]
    stale: list[StaleRunbook]
    runbooks: list[RunbookScore]
    # Gaps closed by a runbook drafted from their thread, merged and answering now.
    closed: list[ClosedGap] = field(default_factory=list)

    def as_json(self) -> dict[str, object]:
        data = asdict(self)
        for gap in data["gaps"]:
            del gap["thread_answer"]
        return data

    def gap(self, gap_id: str) -> Gap | None:
        return next((g for g in self.gaps if g.id == gap_id), None)


async def gap_report(
    store: Store,
    tenant: str,
    *,
    since: timedelta,
    stale_after_days: int,
    now: datetime,
    owner: str | None = None,
    thresholds: GapThresholds | None = None,
) -> GapReport:
    inputs = await load_gap_inputs(store, tenant, since=now - since)
    return build_report(
        tenant,
        inputs,
        since=now - since,
        now=now,
        stale_after_days=stale_after_days,
        owner=owner,
        thresholds=thresholds or load_gap_thresholds(),
    )


def build_report(
    tenant: str,
    inputs: GapInputs,
    *,
    since: datetime,
    now: datetime,
    stale_after_days: int,
    thresholds: GapThresholds,
    owner: str | None = None,
) -> GapReport:
    owners = Owners(inputs)
    outcomes = Outcomes.of(inputs)
    answered = [f for f in inputs.facts if f.status == "answered"]
    abstained = [f for f in inputs.facts if f.status == "abstained"]
    groups = open_gaps(inputs, thresholds=thresholds, now=now, quiet_days=QUIET_DAYS)
    gaps, closed = _with_thread_drafts(groups, [_gap(g, inputs, owners) for g in groups], inputs)
    votes = Counter(v.value for v in inputs.votes)
    totals = {
        "questions": len(inputs.facts),
        "answered": len(answered),
        "abstained": len(abstained),
        "downvoted_answers": sum(f.answer_id in outcomes.downvoted for f in answered),
        "open_gaps": sum(g.count for g in gaps),
        "open_groups": len(gaps),
        "up": votes["up"],
        "down": votes["down"],
    }
    downvoted = _downvoted(inputs, owners)
    stale = _stale(inputs, outcomes, owners, stale_after_days, now, thresholds)
    runbooks = _scores(answered, inputs, owners)
    if owner is not None:
        gaps = [g for g in gaps if _mine(g.owner, g.owner_target, owner)]
        downvoted = [r for r in downvoted if owned_by(owners.for_runbook(r.document_id), owner)]
        stale = [r for r in stale if owned_by(owners.for_runbook(r.document_id), owner)]
        runbooks = [r for r in runbooks if owned_by(owners.for_runbook(r.document_id), owner)]
    targets = {g.owner: g.owner_target for g in gaps}
    rows: list[DownvotedRunbook | StaleRunbook | RunbookScore] = [*downvoted, *stale, *runbooks]
    for row in rows:
        found = owners.for_runbook(row.document_id)
        targets.setdefault(found.name, found.target)
    return GapReport(
        tenant=tenant,
        since=since.isoformat(timespec="seconds"),
        generated_at=now.isoformat(timespec="seconds"),
        stale_after_days=stale_after_days,
        owner=owner,
        thresholds={
            "cluster_similarity": thresholds.cluster_similarity,
            "nearest_similarity": thresholds.nearest_similarity,
        },
        vote_rule=VOTE_RULE,
        owner_targets=dict(sorted(targets.items())),
        totals=totals,
        gaps=gaps,
        downvoted=downvoted,
        stale=stale,
        runbooks=runbooks,
        closed=closed,
    )


def _with_thread_drafts(
    groups: list[OpenGap], gaps: list[Gap], inputs: GapInputs
) -> tuple[list[Gap], list[ClosedGap]]:
    """Open gaps with their thread's draft, and the gaps a merged draft closed."""
    still_open, closed = [], []
    for group, gap in zip(groups, gaps, strict=True):
        draft = draft_of(group.facts, inputs.drafts)
        if draft is None:
            still_open.append(gap)
            continue
        runbook = closing_runbook(draft, inputs.facts, inputs.documents)
        if runbook is None:
            still_open.append(replace(gap, thread_draft=DRAFT_OPEN, thread_draft_link=draft.link))
            continue
        closed.append(
            ClosedGap(gap.id, gap.label, gap.count, runbook.document_id, runbook.title, draft.link)
        )
    return still_open, closed


def _mine(name: str, target: str | None, wanted: str) -> bool:
    return owned_by(Owner(name, target, ""), wanted)


def _gap(group: OpenGap, inputs: GapInputs, owners: Owners) -> Gap:
    facts = group.facts
    service = _service(facts)
    owner = owners.for_runbook(group.nearest) if group.nearest else owners.for_service(service)
    newest_first = sorted(facts, key=lambda f: f.created_at, reverse=True)
    questions = list(dict.fromkeys(f.question for f in newest_first if f.question))
    first_asked = facts[0].created_at.isoformat(timespec="seconds")
    last_asked = newest_first[0].created_at.isoformat(timespec="seconds")
    label = group.label
    draft = None
    if group.nearest is None:
        draft = render_draft(
            title=draft_title(label.alert, label.terms, f"Unanswered questions {group.id}"),
            owner=owner.name,
            service=service,
            questions=questions[:DRAFT_QUESTIONS],
            asked=len(facts),
            first_asked=first_asked[:10],
            last_asked=last_asked[:10],
        )
    return Gap(
        id=group.id,
        label=label.text,
        kind=label.kind,
        count=len(facts),
        abstained=sum(f.status == "abstained" for f in facts),
        downvoted=group.downvoted,
        examples=questions[:EXAMPLES],
        nearest_runbook=group.nearest,
        nearest_title=_title(group.nearest, inputs.documents) if group.nearest else None,
        nearest_similarity=group.nearest_similarity,
        owner=owner.name,
        owner_target=owner.target,
        owner_source=owner.source,
        service=service,
        first_asked=first_asked,
        last_asked=last_asked,
        draft=draft,
        thread_answer=next((f.answer_id for f in newest_first if f.in_thread), None),
    )


def _service(facts: list[FactRow]) -> str | None:
    """The service most of the questions were scoped to (channel map or alert label)."""
    scoped = Counter(f.service for f in facts if f.service)
    if not scoped:
        scoped = Counter(
            t.partition(":")[2] for f in facts for t in f.topics if t.startswith("service:")
        )
    return min(scoped, key=lambda s: (-scoped[s], s)) if scoped else None


def _title(document_id: str, documents: dict[str, DocumentRow]) -> str:
    row = documents.get(document_id)
    return row.title if row is not None else document_id


def _downvoted(inputs: GapInputs, owners: Owners) -> list[DownvotedRunbook]:
    reasons: dict[str, Counter[str]] = {}
    for vote in inputs.votes:
        if vote.value == "down" and vote.documents:
            reasons.setdefault(vote.documents[0], Counter())[vote.reason or "none"] += 1
    order = {code: n for n, code in enumerate((*REASONS, "none"))}
    rows = [
        DownvotedRunbook(
            document_id=d,
            title=_title(d, inputs.documents),
            down=sum(counts.values()),
            reasons=dict(sorted(counts.items(), key=lambda kv: (-kv[1], order.get(kv[0], 99)))),
            owner=owners.for_runbook(d).name,
        )
        for d, counts in reasons.items()
    ]
    return sorted(rows, key=lambda r: (-r.down, r.document_id))


def _stale(
    inputs: GapInputs,
    outcomes: Outcomes,
    owners: Owners,
    after_days: int,
    now: datetime,
    thresholds: GapThresholds,
) -> list[StaleRunbook]:
    """Old runbooks that matter: cited by answers that got 👎, or the near runbook of questions
    that abstained; ranked by how many answers cite them."""
    answers: Counter[str] = Counter()
    downvoted: Counter[str] = Counter()
    abstained: Counter[str] = Counter()
    for fact in inputs.facts:
        if fact.status == "answered":
            cited = list(dict.fromkeys(fact.documents))
            answers.update(cited)
            if fact.answer_id in outcomes.downvoted:
                downvoted.update(cited)
        elif fact.documents and _near(fact, thresholds):
            abstained[fact.documents[0]] += 1
    rows = []
    for document_id in set(downvoted) | set(abstained):
        row = inputs.documents.get(document_id)
        age = age_in_days(row.updated, today=now.date()) if row is not None else None
        if row is None or age is None or age <= after_days:
            continue
        rows.append(
            StaleRunbook(
                document_id,
                row.title,
                row.updated,
                age,
                answers[document_id],
                downvoted[document_id],
                abstained[document_id],
                owners.for_runbook(document_id).name,
            )
        )
    return sorted(
        rows,
        key=lambda r: (-r.answers, -(r.downvoted_answers + r.abstained_near), r.document_id),
    )


def _near(fact: FactRow, thresholds: GapThresholds) -> bool:
    """Facts from before similarities were kept count as near (their nearest was all we had)."""
    return not fact.cosines or fact.cosines[0] >= thresholds.nearest_similarity


def _scores(answered: list[FactRow], inputs: GapInputs, owners: Owners) -> list[RunbookScore]:
    cited = Counter(d for f in answered for d in dict.fromkeys(f.documents))
    ups: Counter[str] = Counter()
    downs: Counter[str] = Counter()
    for vote in inputs.votes:
        if vote.documents:
            (ups if vote.value == "up" else downs)[vote.documents[0]] += 1
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
                owners.for_runbook(document_id).name,
            )
        )
    return sorted(rows, key=lambda r: (-r.answered, -r.down, r.document_id))
