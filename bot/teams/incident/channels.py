"""A Teams channel's switches for unprompted answers: the core's ``channel_settings`` rows, keyed
by the AAD tenant in ``team_id`` as Teams channel scopes are (a GUID never collides with a Slack
team id), so alert repeats, mutes and followed threads are the same tables Slack uses.

The alerts switch also keeps the channel's Graph subscription row in step (``graph``:
``TEAMS_GRAPH_ALERTS``): wanted while alerts are on and the team's AAD group id is known,
unwanted (so deleted by ``runbook serve``) once they are off."""

from __future__ import annotations

from bot.core.alerts.channel_settings import (
    ChannelSwitches,
    Switch,
    channel_settings,
    list_channel_switches,
    set_channel_switch,
)
from bot.teams.graph.subscriptions import drop_subscription, subscription_row, want_subscription
from bot.teams.tenancy import GUID, find_teams_tenant, normalize_aad_tenant
from rag import ConfigurationError, Store


async def set_teams_channel_switch(
    store: Store,
    aad_tenant_id: str,
    channel_id: str,
    switch: Switch,
    on: bool,
    *,
    team_id: str | None = None,
    graph: bool = False,
) -> ChannelSwitches:
    """Switch alerts or follow-ups on or off in a channel (``19:…@thread.tacv2``); its row.
    ``team_id``: the team's AAD group id, which the Graph subscription needs."""
    aad = normalize_aad_tenant(aad_tenant_id)
    tenant = await find_teams_tenant(store, aad)
    if tenant is None:
        raise ConfigurationError(
            f"AAD tenant {aad} is not mapped to a tenant; run `runbook teams tenant add` first"
        )
    channel = teams_channel_id(channel_id)
    team = None if team_id is None else teams_group_id(team_id)
    await set_channel_switch(store, tenant, aad, channel, switch, on)
    if switch == "alerts" and not on:
        await drop_subscription(store, tenant, aad, channel)
    elif switch == "alerts" and graph:
        known = await subscription_row(store, tenant, aad, channel)
        team = team or (known.team_id if known is not None else None)
        if team is not None:
            await want_subscription(store, tenant, aad, channel, team)
    stored = await channel_settings(store, tenant, aad, channel)
    return ChannelSwitches(tenant, aad, channel, stored.alerts, stored.follow_ups)


async def list_teams_channels(store: Store, aad_tenant_id: str) -> list[ChannelSwitches]:
    return await list_channel_switches(store, normalize_aad_tenant(aad_tenant_id))


def teams_group_id(team_id: str) -> str:
    """A team's AAD group id (the ``groupId`` of a channel link), lower-case."""
    value = team_id.strip().lower()
    if not GUID.fullmatch(value):
        raise ConfigurationError(
            f"team id {team_id!r} is not the team's AAD group id (a GUID: in Teams, the "
            "channel's ⋯ › Get link to channel, its groupId= parameter)"
        )
    return value


def teams_channel_id(channel_id: str) -> str:
    """The channel id as activities carry it in ``channelData.channel.id``; a thread's
    ``;messageid=`` is dropped, anything that is not a ``19:`` id refused."""
    channel = channel_id.strip().split(";")[0]
    if not channel.startswith("19:") or len(channel) < 4:
        raise ConfigurationError(
            f"channel id {channel_id!r} is not a Teams channel id (19:…@thread.tacv2; "
            "in Teams: the channel's ⋯ › Get link to channel, the part after /channel/, decoded)"
        )
    return channel
