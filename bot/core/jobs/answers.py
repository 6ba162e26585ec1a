"""One answer per job, however often the job runs: a re-run reuses the answer already stored.

The first run stores its answer and links it to the job row; a re-run (its worker died after
that) loads the same answer instead of asking again, so the card it posts, or finds already
posted, carries the same answer id and the same buttons.
"""

from __future__ import annotations

from bot.core.answers.store import Placement
from bot.core.conversation import Conversation
from bot.core.jobs.queue import Job, link_row
from rag import AskResult


async def answer_for_job(
    conversation: Conversation,
    job: Job,
    tenant: str,
    question: str,
    *,
    service: str | None,
    placement: Placement,
    keep_unanswered: bool = True,
) -> AskResult:
    """``keep_unanswered=False``: an outcome other than an answer is neither stored nor linked
    (see ``Conversation.ask``); a re-run asks again."""
    if job.answer_id is not None and job.tenant_id == tenant:
        stored = await conversation.answers.load(tenant, job.answer_id)
        if stored is not None:
            return stored.result
    # The job's link to the answer goes with the answer's own rows, in their transaction.
    result, linked_rows = await conversation.ask_with(
        tenant,
        question,
        service=service,
        placement=placement,
        keep_unanswered=keep_unanswered,
        also=lambda answer_id: [link_row(job, tenant, answer_id)],
    )
    if not keep_unanswered and result.status != "answered":
        return result
    linked = str(linked_rows[0][0]) if linked_rows and linked_rows[0] else None
    if linked is not None and linked != result.answer_id:
        # Two runs at once (a lease lost to a stalled but living worker): the first link wins.
        stored = await conversation.answers.load(tenant, linked)
        if stored is not None:
            return stored.result
    return result
