"""The durable queue of 👎 notes for runbook owners, sent at most once per runbook per window.

A reason is queued per runbook the answer cited. A flush claims one runbook at a time with
``FOR UPDATE SKIP LOCKED`` on its ``owner_batches`` row, so replicas flushing together never send
the same batch; the row's ``last_sent_at`` is the batching clock. The message itself is sent by
a surface (``OwnerMessenger``) inside the claim: if the send fails on the network the claim rolls
back and the next flush tries again.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol

import psycopg
from psycopg.rows import TupleRow

from bot.core.answer_facts import fact_documents
from bot.core.answers_store import StoredAnswer
from bot.core.owners import route_for
from rag import Store

logger = logging.getLogger(__name__)

SENT, UNROUTED, WITHDRAWN = "sent", "unrouted", "withdrawn"

_ENSURE_BATCH = """
INSERT INTO owner_batches (tenant_id, document_id) VALUES (%(tenant)s, %(document_id)s)
ON CONFLICT DO NOTHING
"""

_QUEUE = """
INSERT INTO owner_notifications (tenant_id, answer_id, user_id, document_id, reason,
                                 enterprise_id, team_id, comment, question, quote, permalink)
VALUES (%(tenant)s, %(answer_id)s, %(user_id)s, %(document_id)s, %(reason)s, %(enterprise_id)s,
        %(team_id)s, %(comment)s, %(question)s, %(quote)s, %(permalink)s)
ON CONFLICT (tenant_id, answer_id, user_id, document_id) DO UPDATE
    SET reason = excluded.reason, comment = excluded.comment, question = excluded.question,
        quote = excluded.quote, permalink = excluded.permalink, created_at = now(),
        outcome = NULL, target = NULL, sent_at = NULL
"""

# A voter who changed their 👎 to 👍 before the batch went out no longer has a reason to send.
_WITHDRAW = """
UPDATE owner_notifications AS n SET outcome = 'withdrawn', sent_at = now()
WHERE n.outcome IS NULL
  AND NOT EXISTS (SELECT FROM feedback AS v
                  WHERE v.tenant_id = n.tenant_id AND v.answer_id = n.answer_id
                    AND v.user_id = n.user_id AND v.value = 'down')
"""

_CLAIM = """
SELECT b.tenant_id, b.document_id FROM owner_batches AS b
WHERE (b.last_sent_at IS NULL OR b.last_sent_at <= now() - make_interval(mins => %(minutes)s))
  AND EXISTS (SELECT FROM owner_notifications AS n
              WHERE n.tenant_id = b.tenant_id AND n.document_id = b.document_id
                AND n.outcome IS NULL)
ORDER BY b.last_sent_at NULLS FIRST, b.tenant_id, b.document_id
LIMIT 1
FOR UPDATE SKIP LOCKED
"""

_PENDING = """
SELECT n.answer_id, n.user_id, n.reason, n.comment, n.question, n.quote, n.permalink,
       n.created_at, n.enterprise_id, n.team_id
FROM owner_notifications AS n
WHERE n.tenant_id = %(tenant)s AND n.document_id = %(document_id)s AND n.outcome IS NULL
ORDER BY n.created_at, n.user_id
"""

_DOCUMENT = """
SELECT title, url FROM documents
WHERE tenant_id = %(tenant)s AND document_id = %(document_id)s
ORDER BY superseded, version DESC LIMIT 1
"""

_FINISH = """
UPDATE owner_notifications SET outcome = %(outcome)s, target = %(target)s, sent_at = now()
WHERE tenant_id = %(tenant)s AND document_id = %(document_id)s AND outcome IS NULL
"""

_MARK_SENT = """
UPDATE owner_batches SET last_sent_at = now()
WHERE tenant_id = %(tenant)s AND document_id = %(document_id)s
"""


@dataclass(frozen=True)
class OwnerNote:
    """One voter's 👎 on one answer, for one of the runbooks it cited."""

    answer_id: str
    user_id: str
    reason: str
    comment: str | None
    question: str | None  # None once retention has removed it
    quote: str | None
    permalink: str | None
    created_at: datetime


@dataclass(frozen=True)
class OwnerBatch:
    """Everything one message to one runbook's owner says."""

    tenant: str
    document_id: str
    title: str
    url: str | None
    target: str
    enterprise_id: str
    team_id: str
    notes: tuple[OwnerNote, ...]


@dataclass
class FlushReport:
    sent: int = 0
    unrouted: int = 0
    withdrawn: int = 0
    failed: list[str] = field(default_factory=list)


class OwnerMessenger(Protocol):
    async def send(self, batch: OwnerBatch) -> str:
        """Deliver the batch; returns ``"sent"`` or ``"failed:<error>"`` for a refusal that
        retrying will not fix. Raises on failures worth retrying (the claim rolls back)."""
        ...


@dataclass(frozen=True)
class CitedQuote:
    document_id: str
    quote: str | None


def cited_quotes(stored: StoredAnswer) -> list[CitedQuote]:
    """Each runbook the answer cited (or, without citations, the nearest) with its first quote."""
    quotes: dict[str, str] = {}
    for citation in sorted(stored.result.citations, key=lambda c: c.n):
        quotes.setdefault(citation.evidence.document_id, citation.quote)
    return [
        CitedQuote(e.document_id, quotes.get(e.document_id)) for e in fact_documents(stored.result)
    ]


async def queue_owner_notes(
    store: Store,
    tenant: str,
    answer_id: str,
    user_id: str,
    *,
    reason: str,
    comment: str | None,
    question: str | None,
    cited: Sequence[CitedQuote],
    permalink: str | None,
    team_id: str,
    enterprise_id: str,
) -> int:
    """Queue one note per cited runbook (a changed reason replaces the pending one)."""
    rows = [
        {
            "tenant": tenant,
            "answer_id": uuid.UUID(answer_id),
            "user_id": user_id,
            "document_id": item.document_id,
            "reason": reason,
            "enterprise_id": enterprise_id,
            "team_id": team_id,
            "comment": comment,
            "question": question,
            "quote": item.quote,
            "permalink": permalink,
        }
        for item in {c.document_id: c for c in cited}.values()
    ]
    async with store.pool.connection() as conn, conn.transaction():
        async with conn.cursor() as cursor:
            await cursor.executemany(_ENSURE_BATCH, rows)
            await cursor.executemany(_QUEUE, rows)
    return len(rows)


async def flush_owner_notes(
    store: Store, messenger: OwnerMessenger, *, batch_minutes: int
) -> FlushReport:
    """Send every batch whose runbook is outside its batching window; safe on many replicas."""
    report = FlushReport()
    async with store.pool.connection() as conn:
        withdrawn = await conn.execute(_WITHDRAW)
        report.withdrawn = withdrawn.rowcount
    while True:
        async with store.pool.connection() as conn, conn.transaction():
            cur = await conn.execute(_CLAIM, {"minutes": batch_minutes})
            claimed = await cur.fetchone()
            if claimed is None:
                return report
            tenant, document_id = claimed
            key = {"tenant": tenant, "document_id": document_id}
            target = await route_for(conn, tenant, document_id)
            if target is None:
                await conn.execute(_FINISH, {**key, "outcome": UNROUTED, "target": None})
                report.unrouted += 1
                continue
            batch = await _load_batch(conn, tenant, document_id, target)
            outcome = await messenger.send(batch)
            await conn.execute(_FINISH, {**key, "outcome": outcome, "target": target})
            if outcome == SENT:
                await conn.execute(_MARK_SENT, key)
                report.sent += 1
            else:
                logger.warning("owner note for %s/%s not sent: %s", tenant, document_id, outcome)
                report.failed.append(outcome)


async def _load_batch(
    conn: psycopg.AsyncConnection[TupleRow], tenant: str, document_id: str, target: str
) -> OwnerBatch:
    key = {"tenant": tenant, "document_id": document_id}
    cur = await conn.execute(_DOCUMENT, key)
    document = await cur.fetchone()
    title, url = document if document is not None else (document_id, None)
    cur = await conn.execute(_PENDING, key)
    rows = await cur.fetchall()
    notes = tuple(
        OwnerNote(str(row[0]), row[1], row[2], row[3], row[4], row[5], row[6], row[7])
        for row in rows
    )
    enterprise_id, team_id = rows[0][8], rows[0][9]
    return OwnerBatch(tenant, document_id, title, url, target, enterprise_id, team_id, notes)
