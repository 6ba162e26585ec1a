"""The durable queue of 👎 notes for runbook owners, sent at most once per runbook per window.

A reason is queued per runbook the answer cited, with the origin of the vote (the surface, the
Slack workspace or Teams organisation, the Teams Bot Connector URL). A flush claims one runbook
at a time with ``FOR UPDATE SKIP LOCKED`` on its ``owner_batches`` row, so replicas flushing
together never send the same batch; the row's ``last_sent_at`` is the batching clock. Inside the
claim the notes are sent per origin by that surface's ``OwnerMessenger``, each to the owner's
target on that surface: one origin's failure never takes another's notes down. A failure worth
retrying leaves that origin's notes pending for the next flush; a surface this process does not
serve leaves them for a replica that does.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol

import psycopg
from psycopg.rows import TupleRow

from bot.core.answers.facts import fact_documents
from bot.core.answers.store import StoredAnswer
from bot.core.owners.runbook_owners import Surface, route_for
from rag import Store

logger = logging.getLogger(__name__)

SENT, UNROUTED, WITHDRAWN = "sent", "unrouted", "withdrawn"

_ENSURE_BATCH = """
INSERT INTO owner_batches (tenant_id, document_id) VALUES (%(tenant)s, %(document_id)s)
ON CONFLICT DO NOTHING
"""

_QUEUE = """
INSERT INTO owner_notifications (tenant_id, answer_id, user_id, document_id, reason,
                                 enterprise_id, team_id, surface, service_url, comment, question,
                                 quote, permalink)
VALUES (%(tenant)s, %(answer_id)s, %(user_id)s, %(document_id)s, %(reason)s, %(enterprise_id)s,
        %(team_id)s, %(surface)s, %(service_url)s, %(comment)s, %(question)s, %(quote)s,
        %(permalink)s)
ON CONFLICT (tenant_id, answer_id, user_id, document_id) DO UPDATE
    SET reason = excluded.reason, comment = excluded.comment, question = excluded.question,
        quote = excluded.quote, permalink = excluded.permalink, created_at = now(),
        enterprise_id = excluded.enterprise_id, team_id = excluded.team_id,
        surface = excluded.surface, service_url = excluded.service_url,
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

# Batches with pending notes of a surface this process serves, not yet tried in this flush.
_CLAIM = """
SELECT b.tenant_id, b.document_id FROM owner_batches AS b
WHERE (b.last_sent_at IS NULL OR b.last_sent_at <= now() - make_interval(mins => %(minutes)s))
  AND EXISTS (SELECT FROM owner_notifications AS n
              WHERE n.tenant_id = b.tenant_id AND n.document_id = b.document_id
                AND n.outcome IS NULL AND n.surface = ANY(%(surfaces)s))
  AND (b.tenant_id, b.document_id) NOT IN (
      SELECT * FROM unnest(%(tried_tenants)s::text[], %(tried_documents)s::text[]))
ORDER BY b.last_sent_at NULLS FIRST, b.tenant_id, b.document_id
LIMIT 1
FOR UPDATE SKIP LOCKED
"""

_PENDING = """
SELECT n.answer_id, n.user_id, n.reason, n.comment, n.question, n.quote, n.permalink,
       n.created_at, n.surface, n.enterprise_id, n.team_id, coalesce(n.service_url, '')
FROM owner_notifications AS n
WHERE n.tenant_id = %(tenant)s AND n.document_id = %(document_id)s AND n.outcome IS NULL
  AND n.surface = ANY(%(surfaces)s)
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
  AND surface = %(surface)s AND enterprise_id = %(enterprise_id)s AND team_id = %(team_id)s
  AND coalesce(service_url, '') = %(service_url)s
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
class NoteOrigin:
    """Where votes came from: the surface, its Slack workspace (enterprise and team id) or Teams
    organisation (AAD tenant id in ``team_id``), and for Teams the Bot Connector URL."""

    surface: Surface
    enterprise_id: str
    team_id: str
    service_url: str = ""


@dataclass(frozen=True)
class OwnerBatch:
    """Everything one message to one runbook's owner says, for the votes of one origin."""

    tenant: str
    document_id: str
    title: str
    url: str | None
    target: str
    origin: NoteOrigin
    notes: tuple[OwnerNote, ...]

    @property
    def enterprise_id(self) -> str:
        return self.origin.enterprise_id

    @property
    def team_id(self) -> str:
        return self.origin.team_id


@dataclass
class FlushReport:
    sent: int = 0
    unrouted: int = 0
    withdrawn: int = 0
    deferred: int = 0
    failed: list[str] = field(default_factory=list)


class DeliveryDeferred(Exception):
    """A send that failed in a way worth retrying on the next flush (the notes stay pending)."""


class OwnerMessenger(Protocol):
    async def send(self, batch: OwnerBatch) -> str:
        """Deliver the batch; returns ``"sent"`` or ``"failed:<error>"`` for a refusal that
        retrying will not fix. Raises ``DeliveryDeferred`` for a failure worth retrying."""
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
    surface: Surface = "slack",
    service_url: str | None = None,
) -> int:
    """Queue one note per cited runbook (a changed reason replaces the pending one); ``team_id``
    is the Slack workspace or, for Teams, the AAD tenant the vote came from."""
    rows = [
        {
            "tenant": tenant,
            "answer_id": uuid.UUID(answer_id),
            "user_id": user_id,
            "document_id": item.document_id,
            "reason": reason,
            "enterprise_id": enterprise_id,
            "team_id": team_id,
            "surface": surface,
            "service_url": service_url,
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
    store: Store, messengers: Mapping[Surface, OwnerMessenger], *, batch_minutes: int
) -> FlushReport:
    """Send every batch whose runbook is outside its batching window, through the surfaces in
    ``messengers``; safe on many replicas."""
    report = FlushReport()
    async with store.pool.connection() as conn:
        withdrawn = await conn.execute(_WITHDRAW)
        report.withdrawn = withdrawn.rowcount
    surfaces = sorted(messengers)
    tried: list[tuple[str, str]] = []
    while surfaces:
        async with store.pool.connection() as conn, conn.transaction():
            cur = await conn.execute(
                _CLAIM,
                {
                    "minutes": batch_minutes,
                    "surfaces": surfaces,
                    "tried_tenants": [t for t, _ in tried],
                    "tried_documents": [d for _, d in tried],
                },
            )
            claimed = await cur.fetchone()
            if claimed is None:
                return report
            tenant, document_id = claimed
            tried.append((tenant, document_id))
            sent = False
            for origin, notes in (await _pending(conn, tenant, document_id, surfaces)).items():
                outcome, target = await _send_origin(
                    conn, messengers[origin.surface], tenant, document_id, origin, notes
                )
                _report_outcome(report, tenant, document_id, outcome)
                if outcome is None:
                    continue
                finish = {
                    "tenant": tenant,
                    "document_id": document_id,
                    "outcome": outcome,
                    "target": target,
                    **_origin_params(origin),
                }
                await conn.execute(_FINISH, finish)
                sent = sent or outcome == SENT
            if sent:
                await conn.execute(_MARK_SENT, {"tenant": tenant, "document_id": document_id})
    return report


async def _send_origin(
    conn: psycopg.AsyncConnection[TupleRow],
    messenger: OwnerMessenger,
    tenant: str,
    document_id: str,
    origin: NoteOrigin,
    notes: tuple[OwnerNote, ...],
) -> tuple[str | None, str | None]:
    """(outcome, target) of one origin's notes; outcome None: deferred, left pending."""
    target = await route_for(conn, tenant, document_id, origin.surface)
    if target is None:
        return UNROUTED, None
    title, url = await _document(conn, tenant, document_id)
    batch = OwnerBatch(tenant, document_id, title, url, target, origin, notes)
    try:
        return await messenger.send(batch), target
    except DeliveryDeferred as exc:
        logger.warning(
            "owner note for %s/%s via %s deferred: %s", tenant, document_id, origin.surface, exc
        )
        return None, target


def _report_outcome(
    report: FlushReport, tenant: str, document_id: str, outcome: str | None
) -> None:
    if outcome is None:
        report.deferred += 1
    elif outcome == SENT:
        report.sent += 1
    elif outcome == UNROUTED:
        report.unrouted += 1
    else:
        logger.warning("owner note for %s/%s not sent: %s", tenant, document_id, outcome)
        report.failed.append(outcome)


def _origin_params(origin: NoteOrigin) -> dict[str, str]:
    return {
        "surface": origin.surface,
        "enterprise_id": origin.enterprise_id,
        "team_id": origin.team_id,
        "service_url": origin.service_url,
    }


async def _document(
    conn: psycopg.AsyncConnection[TupleRow], tenant: str, document_id: str
) -> tuple[str, str | None]:
    cur = await conn.execute(_DOCUMENT, {"tenant": tenant, "document_id": document_id})
    document = await cur.fetchone()
    return (document[0], document[1]) if document is not None else (document_id, None)


async def _pending(
    conn: psycopg.AsyncConnection[TupleRow],
    tenant: str,
    document_id: str,
    surfaces: Sequence[str],
) -> dict[NoteOrigin, tuple[OwnerNote, ...]]:
    """The runbook's pending notes grouped by where their votes came from, oldest first."""
    params = {"tenant": tenant, "document_id": document_id, "surfaces": list(surfaces)}
    cur = await conn.execute(_PENDING, params)
    grouped: dict[NoteOrigin, list[OwnerNote]] = {}
    for row in await cur.fetchall():
        surface: Surface = "teams" if row[8] == "teams" else "slack"
        origin = NoteOrigin(surface, row[9], row[10], row[11])
        note = OwnerNote(str(row[0]), row[1], row[2], row[3], row[4], row[5], row[6], row[7])
        grouped.setdefault(origin, []).append(note)
    return {origin: tuple(notes) for origin, notes in grouped.items()}
