"""Who may change a tenant's settings: the platform's own admins (a Slack workspace's admins and
owners, as the surface reports them), the installer, and the people or user groups an admin
added. Checked on the server for every change; a surface only reports facts about the actor.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

from psycopg import AsyncConnection
from psycopg.rows import TupleRow, class_row

from rag import Store

Surface = Literal["slack", "teams"]
PrincipalKind = Literal["user", "usergroup"]


@dataclass(frozen=True)
class Actor:
    """Who asks for a change, as the verified request names them. ``platform_admin``: the
    surface found them an admin or owner of the workspace itself; ``groups``: the tenant's
    admin user groups the surface found them a member of."""

    surface: Surface
    user_id: str
    platform_admin: bool = False
    groups: frozenset[str] = field(default_factory=frozenset)


@dataclass(frozen=True)
class AdminEntry:
    principal: str
    kind: str
    added_by: str
    added_at: datetime


async def list_admins(store: Store, tenant: str, surface: Surface) -> list[AdminEntry]:
    async with store.pool.connection() as conn:
        cur = conn.cursor(row_factory=class_row(AdminEntry))
        await cur.execute(
            "SELECT principal, kind, added_by, added_at FROM tenant_admins "
            "WHERE tenant_id = %s AND surface = %s ORDER BY added_at, principal",
            (tenant, surface),
        )
        return await cur.fetchall()


async def admin_groups(store: Store, tenant: str, surface: Surface) -> list[str]:
    """The user groups whose members are admins (the surface resolves membership)."""
    return [a.principal for a in await list_admins(store, tenant, surface) if a.kind == "usergroup"]


async def is_admin(store: Store, tenant: str, actor: Actor) -> bool:
    if actor.platform_admin:
        return True
    async with store.pool.connection() as conn:
        cur = await conn.execute(
            "SELECT 1 FROM tenant_admins WHERE tenant_id = %(tenant)s AND surface = %(surface)s "
            "AND (principal = %(user)s OR (kind = 'usergroup' AND principal = ANY(%(groups)s)))",
            {
                "tenant": tenant,
                "surface": actor.surface,
                "user": actor.user_id,
                "groups": sorted(actor.groups),
            },
        )
        return await cur.fetchone() is not None


async def insert_admin(
    conn: AsyncConnection[TupleRow],
    tenant: str,
    surface: Surface,
    principal: str,
    kind: PrincipalKind,
    added_by: str,
) -> bool:
    """Add an admin inside the caller's transaction; False when they were one already."""
    cur = await conn.execute(
        "INSERT INTO tenant_admins (tenant_id, surface, principal, kind, added_by) "
        "VALUES (%s, %s, %s, %s, %s) ON CONFLICT DO NOTHING",
        (tenant, surface, principal, kind, added_by),
    )
    return cur.rowcount > 0


async def delete_admin(
    conn: AsyncConnection[TupleRow], tenant: str, surface: Surface, principal: str
) -> bool:
    cur = await conn.execute(
        "DELETE FROM tenant_admins WHERE tenant_id = %s AND surface = %s AND principal = %s",
        (tenant, surface, principal),
    )
    return cur.rowcount > 0
