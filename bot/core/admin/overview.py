"""Everything a tenant's settings page shows, read in one go and surface-neutral: sources with
their health, the bot's channels with their switches, the default owner, the top gaps, the
admins and the latest changes. Slack's App Home and Teams' settings card both render it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from bot.core.admin.admins import AdminEntry, Surface, list_admins
from bot.core.admin.audit import AuditEntry, recent_changes
from bot.core.gaps.report import gap_report
from bot.core.owners.runbook_owners import default_owner
from rag import Settings, SourceRow, Store, list_sources

GAP_DAYS = 30
TOP_GAPS = 5


@dataclass(frozen=True)
class ChannelRow:
    channel_id: str
    name: str
    alerts: bool
    follow_ups: bool
    service: str | None


@dataclass(frozen=True)
class SourceLine:
    source_id: str
    name: str
    kind: str
    where: str
    scope: str
    last_sync: datetime | None
    outcome: str  # "synced", "failed" or "never synced"
    error: str | None
    skipped: int
    next_sync: datetime


@dataclass(frozen=True)
class GapLine:
    gap_id: str
    label: str
    count: int
    owner: str
    has_draft: bool


@dataclass(frozen=True)
class TenantOverview:
    tenant: str
    sources: list[SourceLine]
    channels: list[ChannelRow]
    services: list[str]
    default_owner: str | None
    gaps: list[GapLine]
    admins: list[AdminEntry]
    changes: list[AuditEntry]


async def load_overview(
    store: Store,
    settings: Settings,
    tenant: str,
    *,
    surface: Surface,
    team_id: str,
    channels: Sequence[tuple[str, str]],
    now: datetime | None = None,
) -> TenantOverview:
    """``channels``: (id, name) of the channels the bot is in, as the surface lists them."""
    now = now or datetime.now(UTC)
    sources, rows, services, owner = await asyncio.gather(
        list_sources(store, tenant=tenant),
        _channel_rows(store, tenant, team_id, channels),
        _services(store, tenant),
        default_owner(store, tenant),
    )
    gaps, admins, changes = await asyncio.gather(
        _gaps(store, settings, tenant, now),
        list_admins(store, tenant, surface),
        recent_changes(store, tenant, limit=10),
    )
    interval = timedelta(minutes=settings.source_sync_interval_min)
    return TenantOverview(
        tenant=tenant,
        sources=[_line(row, interval, now) for row in sources],
        channels=rows,
        services=services,
        default_owner=owner,
        gaps=gaps,
        admins=admins,
        changes=changes,
    )


def _line(row: SourceRow, interval: timedelta, now: datetime) -> SourceLine:
    report = row.last_report or {}
    skipped = report.get("skipped") or []
    since = row.last_sync_at or now
    return SourceLine(
        source_id=str(row.source_id),
        name=row.name,
        kind=row.kind,
        where=str(row.settings.get("url") or row.settings.get("base_url") or ""),
        scope=str(row.settings.get("branch") or row.settings.get("space") or ""),
        last_sync=row.last_sync_at,
        outcome=row.last_outcome or "never synced",
        error=row.last_error,
        skipped=len(skipped) if isinstance(skipped, list) else 0,
        next_sync=max(since + interval, now) if row.last_sync_at else now,
    )


async def _channel_rows(
    store: Store, tenant: str, team_id: str, channels: Sequence[tuple[str, str]]
) -> list[ChannelRow]:
    ids = [c for c, _ in channels]
    async with store.pool.connection() as conn:
        cur = await conn.execute(
            "SELECT channel_id, alerts, follow_ups FROM channel_settings "
            "WHERE tenant_id = %s AND team_id = %s AND channel_id = ANY(%s)",
            (tenant, team_id, ids),
        )
        switches = {str(c): (bool(a), bool(f)) for c, a, f in await cur.fetchall()}
        cur = await conn.execute(
            "SELECT channel_id, service FROM channel_scopes "
            "WHERE tenant_id = %s AND team_id = %s AND channel_id = ANY(%s)",
            (tenant, team_id, ids),
        )
        scopes = {str(c): str(s) for c, s in await cur.fetchall()}
    return [
        ChannelRow(c, name, *switches.get(c, (False, False)), scopes.get(c)) for c, name in channels
    ]


async def _services(store: Store, tenant: str) -> list[str]:
    async with store.pool.connection() as conn:
        cur = await conn.execute(
            "SELECT DISTINCT service FROM documents WHERE tenant_id = %s AND NOT superseded "
            "AND service IS NOT NULL AND service <> '' ORDER BY 1 LIMIT 90",
            (tenant,),
        )
        return [str(s) for (s,) in await cur.fetchall()]


async def _gaps(store: Store, settings: Settings, tenant: str, now: datetime) -> list[GapLine]:
    report = await gap_report(
        store,
        tenant,
        since=timedelta(days=GAP_DAYS),
        stale_after_days=settings.stale_after_days,
        now=now,
    )
    return [
        GapLine(
            g.id,
            g.label or (g.examples[0] if g.examples else g.id),
            g.count,
            g.owner,
            g.draft is not None,
        )
        for g in report.gaps[:TOP_GAPS]
    ]
