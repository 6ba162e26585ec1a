"""A tenant's install lifecycle: an install creates it (named from the workspace, the installer
its first admin), an uninstall starts its retention window, a reinstall inside the window finds
it as it was, and upkeep deletes it once the window has passed.

Only tenants an install created (a ``tenant_installs`` row) are ever deleted this way: a tenant
an operator mapped with ``runbook workspace add`` is the operator's to delete.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from datetime import timedelta

from psycopg import AsyncConnection
from psycopg.rows import TupleRow

from bot.core.admin.admins import Surface, insert_admin
from bot.core.admin.audit import record_change
from rag import Store, delete_tenant

logger = logging.getLogger(__name__)

SYSTEM_ACTOR = "install"


@dataclass(frozen=True)
class Installed:
    tenant: str
    created: bool  # a new tenant
    reinstalled: bool  # a tenant inside its retention window, installed again


@dataclass(frozen=True)
class InstallPlace:
    """Where an install happened: a Slack workspace (``team_id``, ``enterprise_id``; an
    org-wide install has team ``*``) or a Teams organisation (``aad_tenant``)."""

    surface: Surface
    install_key: str
    display_name: str
    team_id: str = ""
    enterprise_id: str = ""
    aad_tenant: str = ""


def tenant_name(display_name: str, fallback: str) -> str:
    """A tenant id from a workspace's name: lower-case letters, digits and '-'."""
    slug = re.sub(r"[^a-z0-9]+", "-", display_name.lower()).strip("-")[:48].strip("-")
    if not slug:
        slug = re.sub(r"[^a-z0-9]+", "-", fallback.lower()).strip("-")[:48] or "workspace"
    return slug


async def provision_install(
    store: Store, place: InstallPlace, *, installer: str, mapped_tenant: str | None
) -> Installed | None:
    """The tenant of a new install: ``mapped_tenant`` (the one the workspace already has) is
    kept — reinstalled if it was uninstalled — else a new tenant is created. None when the
    workspace was mapped by an operator (nothing changes)."""
    async with store.pool.connection() as conn, conn.transaction():
        if mapped_tenant is not None:
            return await _reinstall(conn, mapped_tenant, place, installer)
        tenant = await _free_name(conn, tenant_name(place.display_name, place.install_key))
        await conn.execute("INSERT INTO tenants (tenant_id) VALUES (%s)", (tenant,))
        await _map(conn, tenant, place)
        await conn.execute(
            "INSERT INTO tenant_installs (tenant_id, surface, install_key, display_name, "
            "installed_by) VALUES (%s, %s, %s, %s, %s)",
            (tenant, place.surface, place.install_key, place.display_name, installer),
        )
        if installer:
            await insert_admin(conn, tenant, place.surface, installer, "user", SYSTEM_ACTOR)
        await record_change(
            conn,
            tenant=tenant,
            actor=installer or SYSTEM_ACTOR,
            surface=place.surface,
            action="tenant.installed",
            target=place.install_key,
            after={"tenant": tenant, "workspace": place.display_name, "admin": installer},
        )
    logger.info("install of %s %s created tenant %s", place.surface, place.install_key, tenant)
    return Installed(tenant, created=True, reinstalled=False)


async def _reinstall(
    conn: AsyncConnection[TupleRow], tenant: str, place: InstallPlace, installer: str
) -> Installed | None:
    cur = await conn.execute(
        "UPDATE tenant_installs SET uninstalled_at = NULL, delete_after = NULL, "
        "installed_at = now() WHERE tenant_id = %s RETURNING (xmax <> 0)",
        (tenant,),
    )
    if await cur.fetchone() is None:
        return None  # an operator's mapping: theirs to manage
    if installer:
        await insert_admin(conn, tenant, place.surface, installer, "user", SYSTEM_ACTOR)
    await record_change(
        conn,
        tenant=tenant,
        actor=installer or SYSTEM_ACTOR,
        surface=place.surface,
        action="tenant.reinstalled",
        target=place.install_key,
    )
    return Installed(tenant, created=False, reinstalled=True)


async def _free_name(conn: AsyncConnection[TupleRow], base: str) -> str:
    """``base``, or ``base-2``, ``base-3`` … when another tenant has it."""
    for n in range(1, 1000):
        name = base if n == 1 else f"{base[:58]}-{n}"
        cur = await conn.execute("SELECT 1 FROM tenants WHERE tenant_id = %s", (name,))
        if await cur.fetchone() is None:
            return name
    raise RuntimeError(f"no free tenant name near {base!r}")


async def _map(conn: AsyncConnection[TupleRow], tenant: str, place: InstallPlace) -> None:
    if place.surface == "teams":
        await conn.execute(
            "INSERT INTO teams_tenants (aad_tenant_id, tenant_id) VALUES (%s, %s)",
            (place.aad_tenant, tenant),
        )
        return
    await conn.execute(
        "INSERT INTO workspaces (enterprise_id, team_id, tenant_id) VALUES (%s, %s, %s)",
        (place.enterprise_id, place.team_id, tenant),
    )


async def mark_uninstalled(
    store: Store, tenant: str, *, surface: Surface, retention_days: int
) -> bool:
    """Start the retention window of a tenant an install created; False for any other."""
    async with store.pool.connection() as conn, conn.transaction():
        cur = await conn.execute(
            "UPDATE tenant_installs SET uninstalled_at = now(), "
            "delete_after = now() + %(keep)s WHERE tenant_id = %(tenant)s "
            "AND surface = %(surface)s AND uninstalled_at IS NULL RETURNING delete_after",
            {"tenant": tenant, "surface": surface, "keep": timedelta(days=retention_days)},
        )
        row = await cur.fetchone()
        if row is None:
            return False
        await record_change(
            conn,
            tenant=tenant,
            actor=SYSTEM_ACTOR,
            surface=surface,
            action="tenant.uninstalled",
            after={"delete_after": row[0].isoformat()},
        )
    logger.info("tenant %s uninstalled; kept until %s", tenant, row[0].isoformat())
    return True


async def delete_due_tenants(store: Store) -> list[str]:
    """Delete every uninstalled tenant whose retention window has passed."""
    async with store.pool.connection() as conn:
        cur = await conn.execute(
            "SELECT tenant_id FROM tenant_installs WHERE delete_after <= now() ORDER BY 1"
        )
        due = [str(t) for (t,) in await cur.fetchall()]
    return [t for t in due if await delete_tenant(store, t)]


async def is_uninstalled(store: Store, tenant: str) -> bool:
    """True while ``tenant`` is inside its retention window after an uninstall."""
    async with store.pool.connection() as conn:
        cur = await conn.execute(
            "SELECT 1 FROM tenant_installs WHERE tenant_id = %s AND uninstalled_at IS NOT NULL",
            (tenant,),
        )
        return await cur.fetchone() is not None
