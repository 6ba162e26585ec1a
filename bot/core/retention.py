"""Text retention: questions, answers, quotes and comments live ``RUNBOOK_RETAIN_TEXT_DAYS``.

After that only ids, topics and counts remain: the answer row (question, answer, quotes, the
state behind its buttons) is deleted, a 👎's free-text comment and an owner note's text are
cleared, a trace's optional text is cleared. The clock is the answer's own time: voting again
on an old answer does not keep its comment or its owner note's copy longer. ``answer_facts``
and the votes themselves stay, so the gap report keeps working on what is left, but the facts
keep only topics another question shares (one question's words could be a name or a password),
and alert names in the repeat and mute memory are replaced by their hash (a mute still matches
it). One purge for every tenant; idempotent.
"""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass
from typing import LiteralString

from rag import Store

logger = logging.getLogger(__name__)

# Each statement clears what is older than %(days)s days. A comment's or an owner note's age is
# its answer's (from the facts, which outlive the answer row), never reset by a later vote.
# Alert names become 'sha256:' || hex(sha256(name)), as ``hashed_alert_name`` computes.
_PURGES: tuple[tuple[str, LiteralString], ...] = (
    ("answers", "DELETE FROM answers WHERE created_at < now() - make_interval(days => %(days)s)"),
    (
        "feedback_comments",
        """
        UPDATE feedback AS v SET comment = NULL
        WHERE v.comment IS NOT NULL
          AND least(v.at, (SELECT f.created_at FROM answer_facts AS f
                           WHERE f.tenant_id = v.tenant_id AND f.answer_id = v.answer_id))
              < now() - make_interval(days => %(days)s)
        """,
    ),
    (
        "owner_notes",
        """
        UPDATE owner_notifications AS n SET comment = NULL, question = NULL, quote = NULL
        WHERE (n.comment IS NOT NULL OR n.question IS NOT NULL OR n.quote IS NOT NULL)
          AND least(n.created_at, (SELECT f.created_at FROM answer_facts AS f
                                   WHERE f.tenant_id = n.tenant_id AND f.answer_id = n.answer_id))
              < now() - make_interval(days => %(days)s)
        """,
    ),
    (
        "trace_texts",
        "UPDATE retrieval_traces SET question = NULL, answer = NULL "
        "WHERE (question IS NOT NULL OR answer IS NOT NULL) "
        "AND created_at < now() - make_interval(days => %(days)s)",
    ),
    # Every expired fact in one statement: all see the topics as they were before it, so two
    # expiring questions that share a topic both keep it.
    (
        "fact_topics",
        """
        UPDATE answer_facts AS f SET topics_pruned = true, topics = ARRAY(
            SELECT topic FROM unnest(f.topics) WITH ORDINALITY AS t(topic, n)
            WHERE EXISTS (SELECT FROM answer_facts AS o
                          WHERE o.tenant_id = f.tenant_id AND o.answer_id <> f.answer_id
                            AND t.topic = ANY(o.topics))
            ORDER BY t.n)
        WHERE NOT f.topics_pruned AND f.created_at < now() - make_interval(days => %(days)s)
        """,
    ),
    (
        "alert_fingerprints",
        """
        UPDATE alert_fingerprints
        SET alert_name = 'sha256:' || encode(sha256(convert_to(alert_name, 'UTF8')), 'hex')
        WHERE alert_name NOT LIKE 'sha256:%%'
          AND claimed_at < now() - make_interval(days => %(days)s)
        """,
    ),
    # A mute made again after its name was hashed is a plain twin of the hashed row: the twin
    # goes (the hashed row still mutes), so hashing cannot collide with the key.
    (
        "muted_alert_twins",
        """
        DELETE FROM muted_alerts AS m
        WHERE m.alert_name NOT LIKE 'sha256:%%'
          AND m.muted_at < now() - make_interval(days => %(days)s)
          AND EXISTS (SELECT FROM muted_alerts AS h
                      WHERE h.tenant_id = m.tenant_id AND h.team_id = m.team_id
                        AND h.channel_id = m.channel_id
                        AND h.alert_name = 'sha256:'
                            || encode(sha256(convert_to(m.alert_name, 'UTF8')), 'hex'))
        """,
    ),
    (
        "muted_alerts",
        """
        UPDATE muted_alerts
        SET alert_name = 'sha256:' || encode(sha256(convert_to(alert_name, 'UTF8')), 'hex')
        WHERE alert_name NOT LIKE 'sha256:%%'
          AND muted_at < now() - make_interval(days => %(days)s)
        """,
    ),
)


def hashed_alert_name(name: str) -> str:
    """What an alert name reads as in the mute and repeat memory once its text expired."""
    return "sha256:" + hashlib.sha256(name.encode()).hexdigest()


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
