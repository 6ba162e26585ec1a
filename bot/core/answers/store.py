"""Answers behind the buttons, and feedback on them.

Button values carry only an answer id; every lookup also filters on the tenant resolved from the
verified payload, so a click in one workspace can never load another tenant's answer. An answer
row holds references to runbook chunks, not their text (``result_codec``), and no response_url:
a redraw re-reads the chunks under the tenant reader.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, replace
from typing import Any, Literal, LiteralString

from psycopg.rows import dict_row
from psycopg.types.json import Jsonb

from bot.core.answers.result_codec import (
    SourceChange,
    chunk_ids_of,
    result_from_json,
    result_to_json,
)
from bot.core.statements import Statement, send_together
from rag import AskResult, Store, load_chunks, runbook_of

Entry = Literal["mention", "command", "shortcut", "alert", "follow_up", "dm", "cli"]


@dataclass(frozen=True)
class Placement:
    """Where a card is shown; a retried or re-rendered card keeps its placement."""

    entry: Entry
    team_id: str
    enterprise_id: str
    channel_id: str | None
    thread_ts: str | None
    ephemeral: bool
    # Teams only: the conversation (thread) id, its Bot Connector URL and the activity answered.
    conversation_id: str | None = None
    service_url: str | None = None
    activity_id: str | None = None


@dataclass(frozen=True)
class StoredAnswer:
    """An answer as it reads now; ``changes`` names sources changed or gone since it was given."""

    tenant: str
    answer_id: str
    question: str
    service: str | None
    result: AskResult
    placement: Placement
    message_ts: str | None
    expanded: frozenset[int]
    changes: tuple[SourceChange, ...] = ()
    # The runbook section shown (an index into ``result.runbook.sections``); None: the cited one.
    section: int | None = None


_INSERT = """
INSERT INTO answers (tenant_id, answer_id, entry, question, service, result, enterprise_id,
                     team_id, channel_id, thread_ts, ephemeral,
                     conversation_id, service_url, activity_id)
VALUES (%(tenant)s, %(answer_id)s, %(entry)s, %(question)s, %(service)s, %(result)s,
        %(enterprise_id)s, %(team_id)s, %(channel_id)s, %(thread_ts)s, %(ephemeral)s,
        %(conversation_id)s, %(service_url)s, %(activity_id)s)
"""

_RECORD_DELIVERY = """
UPDATE answers SET message_ts = %(ts)s, ephemeral = %(ephemeral)s
WHERE tenant_id = %(tenant)s AND answer_id = %(answer_id)s
"""

_SELECT = """
SELECT answer_id, question, service, result, entry, team_id, enterprise_id, channel_id,
       thread_ts, ephemeral, message_ts, expanded, conversation_id,
       service_url, activity_id, shown_section
FROM answers WHERE tenant_id = %(tenant)s AND answer_id = %(answer_id)s
"""

# Array updates in place: two clicks at once both land (a read-modify-write would lose one).
_SHOW_QUOTE = """
UPDATE answers SET expanded = array_append(array_remove(expanded, %(n)s::int), %(n)s::int)
WHERE tenant_id = %(tenant)s AND answer_id = %(answer_id)s RETURNING expanded
"""
_HIDE_QUOTE = """
UPDATE answers SET expanded = array_remove(expanded, %(n)s::int)
WHERE tenant_id = %(tenant)s AND answer_id = %(answer_id)s RETURNING expanded
"""

_FEEDBACK = """
INSERT INTO feedback (tenant_id, answer_id, user_id, value)
SELECT tenant_id, answer_id, %(user_id)s, %(value)s
FROM answers WHERE tenant_id = %(tenant)s AND answer_id = %(answer_id)s
ON CONFLICT (tenant_id, answer_id, user_id)
    DO UPDATE SET value = excluded.value, at = now()
RETURNING 1
"""


class AnswerStore:
    def __init__(self, store: Store) -> None:
        self._store = store

    async def save(
        self, result: AskResult, *, question: str, service: str | None, placement: Placement
    ) -> str:
        """Store a fresh answer; returns its id (the one its buttons carry)."""
        answer_id, row = answer_row(result, question=question, service=service, placement=placement)
        await send_together(self._store, [row])
        return answer_id

    async def load(self, tenant: str, answer_id: str) -> StoredAnswer | None:
        key = _parse_id(answer_id)
        if key is None:
            return None
        async with self._store.pool.connection() as conn:
            cur = conn.cursor(row_factory=dict_row)
            await cur.execute(_SELECT, {"tenant": tenant, "answer_id": key})
            row = await cur.fetchone()
        if row is None:
            return None
        placement = Placement(
            entry=row["entry"],
            team_id=row["team_id"],
            enterprise_id=row["enterprise_id"],
            channel_id=row["channel_id"],
            thread_ts=row["thread_ts"],
            ephemeral=row["ephemeral"],
            conversation_id=row["conversation_id"],
            service_url=row["service_url"],
            activity_id=row["activity_id"],
        )
        chunks = await load_chunks(self._store, tenant, chunk_ids_of(row["result"]))
        redrawn = result_from_json(row["result"], chunks)
        result = replace(redrawn.result, runbook=await runbook_of(self._store, redrawn.result))
        return StoredAnswer(
            tenant=tenant,
            answer_id=str(row["answer_id"]),
            question=row["question"],
            service=row["service"],
            result=result,
            placement=placement,
            message_ts=row["message_ts"],
            expanded=frozenset(row["expanded"]),
            changes=redrawn.changes,
            section=row["shown_section"],
        )

    async def record_delivery(
        self, tenant: str, answer_id: str, *, message_ts: str | None, ephemeral: bool
    ) -> None:
        statement = delivery_row(tenant, answer_id, message_ts=message_ts, ephemeral=ephemeral)
        await send_together(self._store, [statement])

    async def toggle_quote(
        self, tenant: str, answer_id: str, n: int, *, show: bool
    ) -> frozenset[int] | None:
        """Show or hide quote ``n`` in one statement, so concurrent clicks never lose a toggle;
        returns the quotes now expanded (None when the answer is gone)."""
        async with self._store.pool.connection() as conn:
            cur = await conn.execute(
                _SHOW_QUOTE if show else _HIDE_QUOTE, {"n": n, **_key(tenant, answer_id)}
            )
            row = await cur.fetchone()
        return frozenset(row[0]) if row is not None else None

    async def show_section(self, tenant: str, answer_id: str, section: int) -> bool:
        """Remember the runbook section the card shows; False when the answer is gone."""
        async with self._store.pool.connection() as conn:
            cur = await conn.execute(
                "UPDATE answers SET shown_section = %(section)s "
                "WHERE tenant_id = %(tenant)s AND answer_id = %(answer_id)s RETURNING 1",
                {"section": section, **_key(tenant, answer_id)},
            )
            return await cur.fetchone() is not None

    async def claim_share(self, tenant: str, answer_id: str, user_id: str) -> bool:
        """True for the first Share click only, so a double click posts once."""
        async with self._store.pool.connection() as conn:
            cur = await conn.execute(
                "UPDATE answers SET shared_by = %(user)s, shared_at = now() "
                "WHERE tenant_id = %(tenant)s AND answer_id = %(answer_id)s "
                "AND shared_at IS NULL RETURNING 1",
                {"user": user_id, **_key(tenant, answer_id)},
            )
            return await cur.fetchone() is not None

    async def release_share(self, tenant: str, answer_id: str, user_id: str) -> None:
        """Undo a claim whose post failed, so the answer can be shared again."""
        await self._execute(
            "UPDATE answers SET shared_by = NULL, shared_at = NULL "
            "WHERE tenant_id = %(tenant)s AND answer_id = %(answer_id)s AND shared_by = %(user)s",
            {"user": user_id, **_key(tenant, answer_id)},
        )

    async def record_feedback(self, tenant: str, answer_id: str, user_id: str, value: str) -> bool:
        """Store (or change) one user's vote; False when the answer does not exist."""
        key = _parse_id(answer_id)
        if key is None:
            return False
        async with self._store.pool.connection() as conn:
            cur = await conn.execute(
                _FEEDBACK,
                {"tenant": tenant, "answer_id": key, "user_id": user_id, "value": value},
            )
            return await cur.fetchone() is not None

    async def _execute(self, query: LiteralString, params: dict[str, Any]) -> None:
        async with self._store.pool.connection() as conn:
            await conn.execute(query, params)


def answer_row(
    result: AskResult, *, question: str, service: str | None, placement: Placement
) -> tuple[str, Statement]:
    """A fresh answer's id and the statement that stores it (``AnswerStore.save``, or sent with
    its facts and its job's link)."""
    answer_id = result.answer_id or str(uuid.uuid4())
    params = {
        "tenant": result.tenant,
        "answer_id": uuid.UUID(answer_id),
        "entry": placement.entry,
        "question": question,
        "service": service,
        "result": Jsonb(result_to_json(result)),
        "enterprise_id": placement.enterprise_id,
        "team_id": placement.team_id,
        "channel_id": placement.channel_id,
        "thread_ts": placement.thread_ts,
        "ephemeral": placement.ephemeral,
        "conversation_id": placement.conversation_id,
        "service_url": placement.service_url,
        "activity_id": placement.activity_id,
    }
    return answer_id, Statement(_INSERT, params)


def delivery_row(
    tenant: str, answer_id: str, *, message_ts: str | None, ephemeral: bool
) -> Statement:
    """Where the answer's card was posted (``record_delivery``, or with its job's end)."""
    return Statement(
        _RECORD_DELIVERY, {"ts": message_ts, "ephemeral": ephemeral, **_key(tenant, answer_id)}
    )


def _parse_id(answer_id: str) -> uuid.UUID | None:
    try:
        return uuid.UUID(answer_id)
    except ValueError:
        return None


def _key(tenant: str, answer_id: str) -> dict[str, Any]:
    return {"tenant": tenant, "answer_id": uuid.UUID(answer_id)}
