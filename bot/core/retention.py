"""Text retention: questions, answers, quotes and comments live ``RUNBOOK_RETAIN_TEXT_DAYS``.

After that only ids, topics and counts remain: the answer row (question, answer, quotes, the
state behind its buttons) is deleted, a 👎's free-text comment and an owner note's text are
cleared, a trace's optional text is cleared. ``answer_facts`` and the votes themselves stay, so
the gap report keeps working on what is left. One purge for every tenant; idempotent.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import LiteralString

from rag import Store

logger = logging.getLogger(__name__)

# Each statement clears what is older than %(days)s days.
_PURGES: tuple[tuple[str, LiteralString], ...] = (
    ("answers", "DELETE FROM answers WHERE created_at < now() - make_interval(days => %(days)s)"),
    (
        "feedback_comments",
        "UPDATE feedback SET comment = NULL "
        "WHERE comment IS NOT NULL AND at < now() - make_interval(days => %(days)s)",
    ),
    (
        "owner_notes",
        "UPDATE owner_notifications SET comment = NULL, question = NULL, quote = NULL "
        "WHERE (comment IS NOT NULL OR question IS NOT NULL OR quote IS NOT NULL) "
        "AND created_at < now() - make_interval(days => %(days)s)",
    ),
    (
        "trace_texts",
        "UPDATE retrieval_traces SET question = NULL, answer = NULL "
        "WHERE (question IS NOT NULL OR answer IS NOT NULL) "
        "AND created_at < now() - make_interval(days => %(days)s)",
    ),
)


@dataclass(frozen=True)
class PurgeReport:
    """Rows touched per kind of text."""

    counts: dict[str, int]

    @property
    def total(self) -> int:
        return sum(self.counts.values())


async def purge_expired_text(store: Store, *, retain_days: int) -> PurgeReport:
    counts: dict[str, int] = {}
    async with store.pool.connection() as conn, conn.transaction():
        for name, statement in _PURGES:
            cur = await conn.execute(statement, {"days": retain_days})
            counts[name] = cur.rowcount
    report = PurgeReport(counts)
    if report.total:
        logger.info("retention purge (%d days): %s", retain_days, counts)
    return report
