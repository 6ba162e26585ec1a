"""The ``runbook_drafts`` table: a thread's draft from the modal to the link it was delivered at."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from psycopg.rows import class_row
from psycopg.types.json import Jsonb

from rag import Store


def draft_id_for(surface: str, team_id: str, channel_id: str, thread_id: str) -> str:
    """The same thread always gets the same id (and so the same branch): ``d-`` + 12 hex."""
    key = f"{surface}:{team_id}:{channel_id}:{thread_id}".encode()
    return "d-" + hashlib.sha256(key).hexdigest()[:12]


@dataclass(frozen=True)
class DraftRow:
    tenant_id: str
    draft_id: str
    surface: str
    team_id: str
    channel_id: str
    thread_id: str
    thread_link: str
    title: str
    markdown: str
    redactions: int
    answer_ids: list[str]
    drafted_by: str
    submitted_by: str | None
    state: str
    destination: dict[str, Any] | None
    link: str | None
    document_id: str | None
    error: str | None
    created_at: datetime
    updated_at: datetime


_UPSERT = """
INSERT INTO runbook_drafts (tenant_id, draft_id, surface, team_id, channel_id, thread_id,
    thread_link, title, markdown, redactions, answer_ids, drafted_by)
VALUES (%(tenant)s, %(draft_id)s, %(surface)s, %(team)s, %(channel)s, %(thread)s, %(link)s,
    %(title)s, %(markdown)s, %(redactions)s, %(answer_ids)s, %(by)s)
ON CONFLICT (tenant_id, draft_id) DO UPDATE SET
    title = EXCLUDED.title, markdown = EXCLUDED.markdown, redactions = EXCLUDED.redactions,
    answer_ids = EXCLUDED.answer_ids, drafted_by = EXCLUDED.drafted_by, updated_at = now()
    WHERE runbook_drafts.state IN ('drafted', 'failed')
RETURNING *
"""

_ANSWERS_IN_THREAD = """
SELECT answer_id::text FROM answers
WHERE tenant_id = %(tenant)s AND channel_id = %(channel)s AND thread_ts = %(thread)s
ORDER BY created_at
"""


class DraftStore:
    def __init__(self, store: Store) -> None:
        self.store = store

    async def save(
        self,
        *,
        tenant: str,
        surface: str,
        team_id: str,
        channel_id: str,
        thread_id: str,
        thread_link: str,
        title: str,
        markdown: str,
        redactions: int,
        drafted_by: str,
    ) -> DraftRow:
        """Store a fresh draft of a thread (a delivered one is kept as it is and returned)."""
        draft_id = draft_id_for(surface, team_id, channel_id, thread_id)
        params = {
            "tenant": tenant,
            "draft_id": draft_id,
            "surface": surface,
            "team": team_id,
            "channel": channel_id,
            "thread": thread_id,
            "link": thread_link,
            "title": title,
            "markdown": markdown,
            "redactions": redactions,
            "by": drafted_by,
        }
        async with self.store.pool.connection() as conn:
            cur = await conn.execute(_ANSWERS_IN_THREAD, params)
            params["answer_ids"] = [str(r[0]) for r in await cur.fetchall()]
            rows = conn.cursor(row_factory=class_row(DraftRow))
            await rows.execute(_UPSERT, params)
            row = await rows.fetchone()
        if row is None:
            found = await self.get(tenant, draft_id)
            assert found is not None
            return found
        return row

    async def get(self, tenant: str, draft_id: str) -> DraftRow | None:
        async with self.store.pool.connection() as conn:
            cur = conn.cursor(row_factory=class_row(DraftRow))
            await cur.execute(
                "SELECT * FROM runbook_drafts WHERE tenant_id = %s AND draft_id = %s",
                (tenant, draft_id),
            )
            return await cur.fetchone()

    async def of_tenant(self, tenant: str) -> list[DraftRow]:
        async with self.store.pool.connection() as conn:
            cur = conn.cursor(row_factory=class_row(DraftRow))
            await cur.execute(
                "SELECT * FROM runbook_drafts WHERE tenant_id = %s ORDER BY created_at", (tenant,)
            )
            return await cur.fetchall()

    async def submit(
        self, tenant: str, draft_id: str, *, title: str, markdown: str, by: str
    ) -> bool:
        """Mark the draft submitted with the reviewed text; False when it was already
        submitted or delivered (a double submit queues nothing twice)."""
        async with self.store.pool.connection() as conn:
            cur = await conn.execute(
                "UPDATE runbook_drafts SET state = 'submitted', title = %s, markdown = %s, "
                "submitted_by = %s, error = NULL, updated_at = now() "
                "WHERE tenant_id = %s AND draft_id = %s AND state IN ('drafted', 'failed')",
                (title, markdown, by, tenant, draft_id),
            )
            return cur.rowcount == 1

    async def delivered(
        self,
        tenant: str,
        draft_id: str,
        *,
        destination: dict[str, Any],
        link: str,
        document_id: str | None,
    ) -> None:
        async with self.store.pool.connection() as conn:
            await conn.execute(
                "UPDATE runbook_drafts SET state = 'open', destination = %s, link = %s, "
                "document_id = %s, error = NULL, updated_at = now() "
                "WHERE tenant_id = %s AND draft_id = %s",
                (Jsonb(destination), link, document_id, tenant, draft_id),
            )

    async def failed(self, tenant: str, draft_id: str, error: str) -> None:
        async with self.store.pool.connection() as conn:
            await conn.execute(
                "UPDATE runbook_drafts SET state = 'failed', error = %s, updated_at = now() "
                "WHERE tenant_id = %s AND draft_id = %s",
                (error, tenant, draft_id),
            )
