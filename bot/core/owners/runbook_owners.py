"""Who owns a runbook, inside one tenant: frontmatter ``owner``, owner names, the fallback.

A frontmatter ``owner`` may be a chat target itself (Slack: ``U…``/``W…`` user, ``S…`` user
group, ``C…``/``G…`` channel or ``#name``; Teams: a channel id ``19:…@thread.tacv2``) or a name
that ``runbook owner map TENANT NAME TARGET`` resolves; a name may have one target per surface,
and a note is routed to the target of the surface it came from. No owner, or one that resolves
to nothing, goes to the tenant's fallback (``runbook owner default TENANT TARGET``); else the
feedback is stored only. Every lookup is keyed by the tenant, so a name mapped in another
tenant is never reached.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

import psycopg
from psycopg.rows import TupleRow

from rag import ConfigurationError, Store

TargetKind = Literal["user", "usergroup", "channel", "teams_channel"]
Surface = Literal["slack", "teams"]
DEFAULT_NAME = ""  # the owner_targets row holding the tenant's fallback

_TARGETS: tuple[tuple[re.Pattern[str], TargetKind], ...] = (
    (re.compile(r"^[UW][A-Z0-9_]{2,}$"), "user"),
    (re.compile(r"^S[A-Z0-9_]{2,}$"), "usergroup"),
    (re.compile(r"^[CG][A-Z0-9_]{2,}$"), "channel"),
    (re.compile(r"^#[a-z0-9][a-z0-9._-]{0,79}$"), "channel"),
    (re.compile(r"^19:[A-Za-z0-9_.-]{1,200}@thread\.(?:tacv2|skype)$"), "teams_channel"),
)

_ROUTE = """
SELECT d.owner, mapped.target, fallback.target
FROM (SELECT %(tenant)s::text AS tenant_id) AS t
LEFT JOIN documents AS d
  ON d.tenant_id = t.tenant_id AND d.document_id = %(document_id)s AND NOT d.superseded
LEFT JOIN owner_targets AS mapped
  ON mapped.tenant_id = t.tenant_id AND mapped.name <> '' AND lower(mapped.name) = lower(d.owner)
     AND mapped.surface = %(surface)s
LEFT JOIN owner_targets AS fallback
  ON fallback.tenant_id = t.tenant_id AND fallback.name = '' AND fallback.surface = %(surface)s
"""

_UPSERT = """
INSERT INTO owner_targets (tenant_id, name, surface, target)
VALUES (%(tenant)s, %(name)s, %(surface)s, %(target)s)
ON CONFLICT (tenant_id, name, surface) DO UPDATE SET target = excluded.target
"""


@dataclass(frozen=True)
class OwnerTarget:
    name: str  # '' for the tenant's fallback
    target: str
    surface: Surface = "slack"


def target_kind(target: str) -> TargetKind | None:
    """What a chat target is, or None when ``target`` is not one (then it may be a name)."""
    for pattern, kind in _TARGETS:
        if pattern.match(target):
            return kind
    return None


def surface_of(target: str) -> Surface | None:
    """Which chat platform a target lives in, or None when it is not a target."""
    kind = target_kind(target)
    if kind is None:
        return None
    return "teams" if kind == "teams_channel" else "slack"


def validate_target(target: str) -> str:
    if target_kind(target) is None:
        raise ConfigurationError(
            f"owner target {target!r} must be a Slack user (U…), user group (S…), "
            "channel id (C…) or #channel-name, or a Teams channel id (19:…@thread.tacv2)"
        )
    return target


async def map_owner(store: Store, tenant: str, name: str, target: str) -> OwnerTarget:
    """``runbook owner map``: runbooks whose frontmatter ``owner`` is ``name`` go to ``target``."""
    if not name.strip():
        raise ConfigurationError("owner name must not be empty")
    return await _upsert(store, tenant, name.strip(), validate_target(target))


async def set_default_owner(store: Store, tenant: str, target: str) -> OwnerTarget:
    """``runbook owner default``: where feedback goes when a runbook's owner resolves to nothing."""
    return await _upsert(store, tenant, DEFAULT_NAME, validate_target(target))


async def default_owner(store: Store, tenant: str) -> str | None:
    """The tenant's fallback owner target (``runbook owner default``), or None when unset."""
    async with store.pool.connection() as conn:
        cur = await conn.execute(
            "SELECT target FROM owner_targets WHERE tenant_id = %(tenant)s AND name = %(name)s",
            {"tenant": tenant, "name": DEFAULT_NAME},
        )
        row = await cur.fetchone()
    return str(row[0]) if row else None


async def list_owner_targets(store: Store, tenant: str) -> list[OwnerTarget]:
    async with store.pool.connection() as conn:
        cur = await conn.execute(
            "SELECT name, target, surface FROM owner_targets WHERE tenant_id = %(tenant)s "
            "ORDER BY name, surface",
            {"tenant": tenant},
        )
        return [
            OwnerTarget(name, target, "teams" if surface == "teams" else "slack")
            for name, target, surface in await cur.fetchall()
        ]


async def route_for(
    conn: psycopg.AsyncConnection[TupleRow],
    tenant: str,
    document_id: str,
    surface: Surface = "slack",
) -> str | None:
    """The ``surface`` target for feedback on one runbook of ``tenant``, or None (stored only)."""
    params = {"tenant": tenant, "document_id": document_id, "surface": surface}
    cur = await conn.execute(_ROUTE, params)
    row = await cur.fetchone()
    if row is None:
        return None
    owner, mapped, fallback = row
    owner = (owner or "").strip()
    if owner and surface_of(owner) == surface:
        return str(owner)
    return str(mapped or fallback) if (mapped or fallback) else None


async def _upsert(store: Store, tenant: str, name: str, target: str) -> OwnerTarget:
    surface = surface_of(target) or "slack"
    params = {"tenant": tenant, "name": name, "surface": surface, "target": target}
    try:
        async with store.pool.connection() as conn:
            await conn.execute(_UPSERT, params)
    except psycopg.errors.ForeignKeyViolation as exc:
        raise ConfigurationError(f"unknown tenant {tenant!r}; ingest its runbooks first") from exc
    return OwnerTarget(name, target, surface)
