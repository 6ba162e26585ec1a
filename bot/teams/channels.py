"""A Teams channel's switches for unprompted answers: the core's ``channel_settings`` rows, keyed
by the AAD tenant in ``team_id`` as Teams channel scopes are (a GUID never collides with a Slack
team id), so alert repeats, mutes and followed threads are the same tables Slack uses."""

from __future__ import annotations

from bot.core.channel_settings import (
    ChannelSwitches,
    Switch,
    channel_settings,
    list_channel_switches,
    set_channel_switch,
)
from bot.teams.tenancy import find_teams_tenant, normalize_aad_tenant
from rag import ConfigurationError, Store


async def set_teams_channel_switch(
    store: Store, aad_tenant_id: str, channel_id: str, switch: Switch, on: bool
) -> ChannelSwitches:
    """Switch alerts or follow-ups on or off in a channel (``19:…@thread.tacv2``); its row."""
    aad = normalize_aad_tenant(aad_tenant_id)
    tenant = await find_teams_tenant(store, aad)
    if tenant is None:
        raise ConfigurationError(
            f"AAD tenant {aad} is not mapped to a tenant; run `runbook teams tenant add` first"
        )
    channel = teams_channel_id(channel_id)
    await set_channel_switch(store, tenant, aad, channel, switch, on)
    stored = await channel_settings(store, tenant, aad, channel)
    return ChannelSwitches(tenant, aad, channel, stored.alerts, stored.follow_ups)


async def list_teams_channels(store: Store, aad_tenant_id: str) -> list[ChannelSwitches]:
    return await list_channel_switches(store, normalize_aad_tenant(aad_tenant_id))


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
