"""Which runbook tenant a Teams organisation (AAD tenant) is: an explicit allow-list.

The AAD tenant comes from the activity (``conversation.tenantId``), sent by an authenticated
Bot Connector; an organisation that is not on the list gets a "not connected" card and nothing
is searched. Nothing is provisioned automatically.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import psycopg
from psycopg.rows import class_row

from rag import ChannelScope, ConfigurationError, Store, map_channel

GUID = re.compile(r"[0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12}")


@dataclass(frozen=True)
class TeamsTenant:
    aad_tenant_id: str
    tenant_id: str


def normalize_aad_tenant(aad_tenant_id: str) -> str:
    """The AAD tenant id in its canonical form (lower-case GUID), or a clear error."""
    value = aad_tenant_id.strip().lower()
    if not GUID.fullmatch(value):
        raise ConfigurationError(
            f"AAD tenant id {aad_tenant_id!r} is not a GUID "
            "(e.g. 5c0ffee0-aaaa-4bbb-8ccc-0123456789ab; Entra ID › Overview › Tenant ID)"
        )
    return value


async def add_teams_tenant(store: Store, aad_tenant_id: str, tenant: str) -> TeamsTenant:
    """Allow an AAD tenant and map it to ``tenant`` (created if new); remapping needs remove."""
    aad = normalize_aad_tenant(aad_tenant_id)
    try:
        async with store.pool.connection() as conn, conn.transaction():
            await conn.execute(
                "INSERT INTO tenants (tenant_id) VALUES (%s) ON CONFLICT DO NOTHING", (tenant,)
            )
            cur = await conn.execute(
                "INSERT INTO teams_tenants (aad_tenant_id, tenant_id) VALUES (%s, %s) "
                "ON CONFLICT (aad_tenant_id) DO NOTHING RETURNING tenant_id",
                (aad, tenant),
            )
            added = await cur.fetchone() is not None
    except psycopg.errors.CheckViolation as exc:
        raise ConfigurationError(
            f"tenant id {tenant!r} must be 1-63 letters, digits, '.', '_' or '-', "
            "starting with a letter or digit"
        ) from exc
    if not added:
        existing = await find_teams_tenant(store, aad)
        if existing != tenant:
            raise ConfigurationError(
                f"AAD tenant {aad} is already mapped to tenant {existing!r}; "
                "remove it first to remap it"
            )
    return TeamsTenant(aad, tenant)


async def list_teams_tenants(store: Store) -> list[TeamsTenant]:
    async with store.pool.connection() as conn:
        cur = conn.cursor(row_factory=class_row(TeamsTenant))
        await cur.execute(
            "SELECT aad_tenant_id, tenant_id FROM teams_tenants ORDER BY tenant_id, aad_tenant_id"
        )
        return await cur.fetchall()


async def remove_teams_tenant(store: Store, aad_tenant_id: str) -> bool:
    aad = normalize_aad_tenant(aad_tenant_id)
    async with store.pool.connection() as conn:
        cur = await conn.execute("DELETE FROM teams_tenants WHERE aad_tenant_id = %s", (aad,))
        return cur.rowcount > 0


async def find_teams_tenant(store: Store, aad_tenant_id: str | None) -> str | None:
    """The tenant an AAD tenant is mapped to; None when unmapped or not a GUID."""
    value = (aad_tenant_id or "").strip().lower()
    if not GUID.fullmatch(value):
        return None
    async with store.pool.connection() as conn:
        cur = await conn.execute(
            "SELECT tenant_id FROM teams_tenants WHERE aad_tenant_id = %s", (value,)
        )
        row = await cur.fetchone()
    return str(row[0]) if row else None


async def map_teams_channel(
    store: Store, aad_tenant_id: str, channel_id: str, service: str
) -> ChannelScope:
    """Scope a Teams channel (``19:…@thread.tacv2``) to one service of the tenant's runbooks."""
    aad = normalize_aad_tenant(aad_tenant_id)
    tenant = await find_teams_tenant(store, aad)
    if tenant is None:
        raise ConfigurationError(
            f"AAD tenant {aad} is not mapped to a tenant; run `runbook teams tenant add` first"
        )
    channel = channel_id.strip().split(";")[0]
    if not channel or not service.strip():
        raise ConfigurationError("a channel map needs a channel id and a service name")
    return await map_channel(store, tenant, aad, channel, service.strip())
