"""Per-channel switches for unprompted answers: alert posts (opt-in) and thread follow-ups.

Set from the CLI (``runbook channel alerts|follow-ups TEAM CHANNEL on|off``) and read by every
surface before it answers anything it was not explicitly asked. Both are opt-in per channel: no
row means alerts off and follow-ups off (a thread reply is read and answered only where a
channel asked for that, never in every private channel the bot was invited to).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from psycopg.rows import class_row

from rag import Store

Switch = Literal["alerts", "follow_ups"]


@dataclass(frozen=True)
class ChannelSettings:
    alerts: bool = False
    follow_ups: bool = False


@dataclass(frozen=True)
class ChannelSwitches:
    """One channel's stored row (``runbook teams channel list``)."""

    tenant_id: str
    team_id: str
    channel_id: str
    alerts: bool
    follow_ups: bool


_SET_ALERTS = """
INSERT INTO channel_settings (tenant_id, team_id, channel_id, alerts)
VALUES (%(tenant)s, %(team)s, %(channel)s, %(on)s)
ON CONFLICT (tenant_id, team_id, channel_id)
    DO UPDATE SET alerts = excluded.alerts, updated_at = now()
"""
_SET_FOLLOW_UPS = """
INSERT INTO channel_settings (tenant_id, team_id, channel_id, follow_ups)
VALUES (%(tenant)s, %(team)s, %(channel)s, %(on)s)
ON CONFLICT (tenant_id, team_id, channel_id)
    DO UPDATE SET follow_ups = excluded.follow_ups, updated_at = now()
"""
# Switching alerts on starts afresh: the channel's mutes go with the old configuration.
_CLEAR_MUTES = """
DELETE FROM muted_alerts
WHERE tenant_id = %(tenant)s AND team_id = %(team)s AND channel_id = %(channel)s
"""


async def set_channel_switch(
    store: Store, tenant: str, team_id: str, channel_id: str, switch: Switch, on: bool
) -> None:
    params = {"tenant": tenant, "team": team_id, "channel": channel_id, "on": on}
    async with store.pool.connection() as conn, conn.transaction():
        await conn.execute(_SET_ALERTS if switch == "alerts" else _SET_FOLLOW_UPS, params)
        if switch == "alerts" and on:
            await conn.execute(_CLEAR_MUTES, params)


async def channel_settings(
    store: Store, tenant: str, team_id: str, channel_id: str
) -> ChannelSettings:
    async with store.pool.connection() as conn:
        cur = await conn.execute(
            "SELECT alerts, follow_ups FROM channel_settings "
            "WHERE tenant_id = %s AND team_id = %s AND channel_id = %s",
            (tenant, team_id, channel_id),
        )
        row = await cur.fetchone()
    return ChannelSettings(alerts=row[0], follow_ups=row[1]) if row else ChannelSettings()


async def list_channel_switches(store: Store, team_id: str) -> list[ChannelSwitches]:
    """Every channel of a workspace (or Teams organisation) with a stored row, in id order."""
    async with store.pool.connection() as conn:
        cur = conn.cursor(row_factory=class_row(ChannelSwitches))
        await cur.execute(
            "SELECT tenant_id, team_id, channel_id, alerts, follow_ups FROM channel_settings "
            "WHERE team_id = %s ORDER BY channel_id",
            (team_id,),
        )
        return await cur.fetchall()
