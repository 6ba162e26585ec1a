"""Which tenant a chat workspace belongs to, and optional channel → service scopes."""

from __future__ import annotations

from dataclasses import dataclass

from psycopg.rows import class_row

from rag.errors import ConfigurationError, UnknownTenantError
from rag.ingest.tenant_ids import validate_tenant
from rag.store.connection import Store


@dataclass(frozen=True)
class Workspace:
    enterprise_id: str
    team_id: str
    tenant_id: str


@dataclass(frozen=True)
class ChannelScope:
    tenant_id: str
    team_id: str
    channel_id: str
    service: str


async def list_tenants(store: Store) -> list[str]:
    """Every tenant the store knows (ingested, or mapped to a workspace), sorted."""
    async with store.pool.connection() as conn:
        cur = await conn.execute("SELECT tenant_id FROM tenants ORDER BY tenant_id")
        return [str(tenant) for (tenant,) in await cur.fetchall()]


async def require_tenant(store: Store, tenant: str) -> None:
    """Raise ``UnknownTenantError`` (naming the known tenants) unless ``tenant`` exists: a
    mistyped tenant must not read as "no runbook answers this"."""
    known = await list_tenants(store)
    if tenant not in known:
        raise UnknownTenantError(tenant, known)


async def add_workspace(
    store: Store, team_id: str, tenant: str, *, enterprise_id: str = ""
) -> Workspace:
    """Map a workspace to a tenant (creating the tenant); remapping is explicit via remove."""
    validate_tenant(tenant)
    if not team_id.strip():
        raise ConfigurationError("a workspace needs a team id (e.g. T0123ABCD)")
    async with store.pool.connection() as conn, conn.transaction():
        await conn.execute(
            "INSERT INTO tenants (tenant_id) VALUES (%s) ON CONFLICT DO NOTHING", (tenant,)
        )
        cur = await conn.execute(
            """
            INSERT INTO workspaces (enterprise_id, team_id, tenant_id)
            VALUES (%(enterprise_id)s, %(team_id)s, %(tenant)s)
            ON CONFLICT (enterprise_id, team_id) DO NOTHING
            RETURNING tenant_id
            """,
            {"enterprise_id": enterprise_id, "team_id": team_id, "tenant": tenant},
        )
        if await cur.fetchone() is None:
            existing = await find_tenant(store, team_id=team_id, enterprise_id=enterprise_id)
            if existing != tenant:
                raise ConfigurationError(
                    f"workspace {team_id} is already mapped to tenant {existing!r}; "
                    "remove it first to remap it"
                )
    return Workspace(enterprise_id, team_id, tenant)


async def list_workspaces(store: Store) -> list[Workspace]:
    async with store.pool.connection() as conn:
        cur = conn.cursor(row_factory=class_row(Workspace))
        await cur.execute(
            "SELECT enterprise_id, team_id, tenant_id FROM workspaces "
            "ORDER BY tenant_id, enterprise_id, team_id"
        )
        return await cur.fetchall()


async def remove_workspace(store: Store, team_id: str, *, enterprise_id: str = "") -> bool:
    async with store.pool.connection() as conn:
        cur = await conn.execute(
            "DELETE FROM workspaces WHERE enterprise_id = %s AND team_id = %s",
            (enterprise_id, team_id),
        )
        return cur.rowcount > 0


async def find_tenant(
    store: Store, *, team_id: str | None, enterprise_id: str | None
) -> str | None:
    """The tenant of a workspace; an org-wide install may be mapped by enterprise alone."""
    async with store.pool.connection() as conn:
        cur = await conn.execute(
            """
            SELECT tenant_id FROM workspaces
            WHERE (enterprise_id = %(enterprise_id)s AND team_id = %(team_id)s)
               OR (%(enterprise_id)s <> '' AND enterprise_id = %(enterprise_id)s AND team_id = '*')
            ORDER BY team_id = '*'
            LIMIT 1
            """,
            {"enterprise_id": enterprise_id or "", "team_id": team_id or ""},
        )
        row = await cur.fetchone()
    return str(row[0]) if row else None


def unmapped_workspace(team_id: str, enterprise_id: str | None) -> str:
    """What an operator is told when ``find_tenant`` finds no tenant for a workspace."""
    org = f" in enterprise {enterprise_id}" if enterprise_id else ""
    return (
        f"workspace {team_id}{org} is not mapped to a tenant; run `runbook workspace add` "
        "first (with --enterprise for Enterprise Grid)"
    )


async def map_channel(
    store: Store, tenant: str, team_id: str, channel_id: str, service: str
) -> ChannelScope:
    async with store.pool.connection() as conn:
        await conn.execute(
            """
            INSERT INTO channel_scopes (tenant_id, team_id, channel_id, service)
            VALUES (%(tenant)s, %(team_id)s, %(channel_id)s, %(service)s)
            ON CONFLICT (tenant_id, team_id, channel_id) DO UPDATE SET service = excluded.service
            """,
            {"tenant": tenant, "team_id": team_id, "channel_id": channel_id, "service": service},
        )
    return ChannelScope(tenant, team_id, channel_id, service)


async def channel_service(store: Store, tenant: str, team_id: str, channel_id: str) -> str | None:
    async with store.pool.connection() as conn:
        cur = await conn.execute(
            "SELECT service FROM channel_scopes "
            "WHERE tenant_id = %s AND team_id = %s AND channel_id = %s",
            (tenant, team_id, channel_id),
        )
        row = await cur.fetchone()
    return str(row[0]) if row else None
