"""The ``sources`` table: a tenant's configured sources, their sealed secrets, last outcomes."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from psycopg import AsyncConnection
from psycopg.errors import UniqueViolation
from psycopg.rows import TupleRow, class_row
from psycopg.types.json import Jsonb

from rag.errors import ConfigurationError
from rag.store.connection import Store


@dataclass(frozen=True)
class SourceRow:
    """A ``sources`` row; its fields are the table's columns (rows are read with ``*``)."""

    source_id: uuid.UUID
    tenant_id: str
    name: str
    kind: str
    settings: dict[str, Any]
    credential: dict[str, Any] | None
    webhook_secret: dict[str, Any]
    created_at: datetime
    last_sync_at: datetime | None
    last_outcome: str | None
    last_report: dict[str, Any] | None
    last_error: str | None
    last_version: str | None
    consecutive_failures: int
    failure_reported_at: datetime | None

    def summary(self) -> dict[str, Any]:
        """What ``source list --json`` shows: no secret, sealed or not."""
        return {
            "source_id": str(self.source_id),
            "tenant": self.tenant_id,
            "name": self.name,
            "kind": self.kind,
            "settings": self.settings,
            "has_credential": self.credential is not None,
            "last_sync_at": None if self.last_sync_at is None else self.last_sync_at.isoformat(),
            "last_outcome": self.last_outcome,
            "last_error": self.last_error,
            "last_version": self.last_version,
            "consecutive_failures": self.consecutive_failures,
            "report": self.last_report,
        }


_INSERT = """
INSERT INTO sources (tenant_id, name, kind, settings, credential, webhook_secret)
VALUES (%(tenant)s, %(name)s, %(kind)s, %(settings)s, %(credential)s, %(webhook_secret)s)
RETURNING *
"""


async def add_source(
    store: Store,
    *,
    tenant: str,
    name: str,
    kind: str,
    settings: dict[str, Any],
    credential: dict[str, Any] | None,
    webhook_secret: dict[str, Any],
) -> SourceRow:
    """Store a new source (its tenant is created if need be); a taken name is an error."""
    params = {
        "tenant": tenant,
        "name": name,
        "kind": kind,
        "settings": Jsonb(settings),
        "credential": None if credential is None else Jsonb(credential),
        "webhook_secret": Jsonb(webhook_secret),
    }
    async with store.pool.connection() as conn, conn.transaction():
        await conn.execute(
            "INSERT INTO tenants (tenant_id) VALUES (%s) ON CONFLICT DO NOTHING", (tenant,)
        )
        cur = conn.cursor(row_factory=class_row(SourceRow))
        try:
            await cur.execute(_INSERT, params)
        except UniqueViolation as exc:
            raise ConfigurationError(
                f"tenant {tenant!r} already has a source named {name!r}; pass --name"
            ) from exc
        row = await cur.fetchone()
    assert row is not None
    return row


async def list_sources(
    store: Store, *, tenant: str | None = None, name: str | None = None
) -> list[SourceRow]:
    query = """
    SELECT * FROM sources
    WHERE (%(tenant)s::text IS NULL OR tenant_id = %(tenant)s)
      AND (%(name)s::text IS NULL OR name = %(name)s)
    ORDER BY tenant_id, name
    """
    async with store.pool.connection() as conn:
        cur = conn.cursor(row_factory=class_row(SourceRow))
        await cur.execute(query, {"tenant": tenant, "name": name})
        return await cur.fetchall()


async def get_source(store: Store, source_id: uuid.UUID) -> SourceRow | None:
    async with store.pool.connection() as conn:
        cur = conn.cursor(row_factory=class_row(SourceRow))
        await cur.execute("SELECT * FROM sources WHERE source_id = %(id)s", {"id": source_id})
        return await cur.fetchone()


_SYNCED = """
UPDATE sources SET last_sync_at = now(), last_outcome = 'synced', last_report = %(report)s,
       last_error = NULL, last_version = %(version)s, consecutive_failures = 0,
       failure_reported_at = NULL
WHERE source_id = %(id)s
"""

_FAILED = """
UPDATE sources SET last_sync_at = now(), last_outcome = 'failed', last_error = %(error)s,
       consecutive_failures = consecutive_failures + 1
WHERE source_id = %(id)s
RETURNING consecutive_failures
"""


async def record_synced(
    conn: AsyncConnection[TupleRow], source_id: uuid.UUID, report: dict[str, Any], version: str
) -> None:
    """Inside the sync's publishing transaction: the outcome lands with the documents."""
    await conn.execute(_SYNCED, {"id": source_id, "report": Jsonb(report), "version": version})


async def record_failed(store: Store, source_id: uuid.UUID, error: str) -> int:
    """Record a failed sync; returns how many syncs in a row have failed now."""
    async with store.pool.connection() as conn:
        cur = await conn.execute(_FAILED, {"id": source_id, "error": error})
        row = await cur.fetchone()
    return 0 if row is None else int(row[0])


_CLAIM_FAILURE_REPORT = """
UPDATE sources SET failure_reported_at = now()
WHERE source_id = %(id)s AND failure_reported_at IS NULL AND consecutive_failures >= %(after)s
RETURNING source_id
"""


async def claim_failure_report(store: Store, source_id: uuid.UUID, *, after: int) -> bool:
    """True once per run of failures (at ``after`` in a row): the caller tells the owner."""
    async with store.pool.connection() as conn:
        cur = await conn.execute(_CLAIM_FAILURE_REPORT, {"id": source_id, "after": after})
        return await cur.fetchone() is not None
