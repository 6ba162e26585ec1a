"""The settings audit log: who changed what, when, and the value before and after.

Values are settings (switches, services, owners, admins, a source's kind and where it points),
never a credential: keys that name a secret are dropped before a row is written.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from psycopg import AsyncConnection
from psycopg.rows import TupleRow, class_row
from psycopg.types.json import Jsonb

from rag import Store

_SECRET_KEYS = ("token", "secret", "password", "pat", "ssh_key", "credential", "key")

_INSERT = """
INSERT INTO settings_audit (tenant_id, actor, surface, action, target, before, after)
VALUES (%(tenant)s, %(actor)s, %(surface)s, %(action)s, %(target)s, %(before)s, %(after)s)
"""


@dataclass(frozen=True)
class AuditEntry:
    tenant_id: str
    audit_id: int
    at: datetime
    actor: str
    surface: str
    action: str
    target: str
    before: Any
    after: Any

    def as_json(self) -> dict[str, Any]:
        return {
            "at": self.at.isoformat(),
            "actor": self.actor,
            "surface": self.surface,
            "action": self.action,
            "target": self.target,
            "before": self.before,
            "after": self.after,
        }


def without_secrets(value: Any) -> Any:
    """``value`` with every key that names a secret removed, at any depth."""
    if isinstance(value, dict):
        return {
            k: without_secrets(v)
            for k, v in value.items()
            if not any(part in str(k).lower() for part in _SECRET_KEYS)
        }
    if isinstance(value, list):
        return [without_secrets(v) for v in value]
    return value


async def record_change(
    conn: AsyncConnection[TupleRow],
    *,
    tenant: str,
    actor: str,
    surface: str,
    action: str,
    target: str = "",
    before: Any = None,
    after: Any = None,
) -> None:
    """Write one audit row, inside the caller's transaction (it lands with the change)."""
    await conn.execute(
        _INSERT,
        {
            "tenant": tenant,
            "actor": actor,
            "surface": surface,
            "action": action,
            "target": target,
            "before": None if before is None else Jsonb(without_secrets(before)),
            "after": None if after is None else Jsonb(without_secrets(after)),
        },
    )


async def recent_changes(store: Store, tenant: str, *, limit: int | None = 10) -> list[AuditEntry]:
    """The tenant's changes, newest first (all of them with ``limit=None``)."""
    async with store.pool.connection() as conn:
        cur = conn.cursor(row_factory=class_row(AuditEntry))
        await cur.execute(
            "SELECT tenant_id, audit_id, at, actor, surface, action, target, before, after "
            "FROM settings_audit WHERE tenant_id = %(tenant)s "
            "ORDER BY at DESC, audit_id DESC LIMIT %(limit)s",
            {"tenant": tenant, "limit": limit},
        )
        return await cur.fetchall()


def describe_change(entry: AuditEntry) -> str:
    """One line for a page or a terminal: ``action target: before → after``."""
    target = f" {entry.target}" if entry.target else ""
    if entry.before is None and entry.after is None:
        return f"{entry.action}{target}"
    return f"{entry.action}{target}: {_short(entry.before)} → {_short(entry.after)}"


def _short(value: Any) -> str:
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, dict):
        return ", ".join(f"{k}={_short(v)}" for k, v in value.items()) or "none"
    return str(value)
