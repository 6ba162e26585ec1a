"""Gaps and the runbooks drafted from their threads (issue 40): a gap whose questions were
asked in a thread that was drafted shows "draft open" with the draft's link, and is closed by
the drafted runbook once it is merged, synced, and has answered a question asked after it."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from bot.core.gaps.rows import DocumentRow, FactRow

DRAFT_OPEN = "draft open"

# Delivered drafts of a tenant, with the bot's answers in their threads.
DRAFTS = """
SELECT draft_id, link, document_id, answer_ids, updated_at
FROM runbook_drafts WHERE tenant_id = %(tenant)s AND state = 'open' AND link IS NOT NULL
"""


@dataclass(frozen=True)
class ThreadDraft:
    draft_id: str
    link: str
    document_id: str | None  # the runbook it becomes once merged (None: a Confluence page)
    answer_ids: list[str]
    updated_at: datetime


@dataclass(frozen=True)
class ClosedGap:
    """A gap a drafted runbook closed: its questions are answered from it now."""

    id: str
    label: str
    count: int
    closed_by: str
    closed_by_title: str
    draft_link: str


def draft_of(facts: list[FactRow], drafts: list[ThreadDraft]) -> ThreadDraft | None:
    """The draft of a thread one of these questions was asked in."""
    asked = {f.answer_id for f in facts}
    return next((d for d in drafts if asked.intersection(d.answer_ids)), None)


def closing_runbook(
    draft: ThreadDraft, facts: list[FactRow], documents: dict[str, DocumentRow]
) -> DocumentRow | None:
    """The drafted runbook, when it is current and answered a question after the draft."""
    if draft.document_id is None or draft.document_id not in documents:
        return None
    answered_from_it = any(
        f.status == "answered"
        and f.created_at > draft.updated_at
        and draft.document_id in f.documents
        for f in facts
    )
    return documents[draft.document_id] if answered_from_it else None
