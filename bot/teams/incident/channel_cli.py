"""``runbook teams channel alerts|follow-ups AAD_TENANT_ID CHANNEL_ID on|off [--json]`` and
``runbook teams channel list AAD_TENANT_ID [--json]``: a Teams channel's unprompted answers,
both off until switched on (the same switches ``runbook channel alerts|follow-ups`` sets for
Slack). Run by ``bot.teams.cli``; options in ``bot.cli_parser``."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from bot.cli_parser import SWITCHES
from bot.core.alerts.channel_settings import ChannelSwitches
from bot.teams.graph.subscriptions import subscription_row
from bot.teams.incident.channels import list_teams_channels, set_teams_channel_switch
from rag import Settings, Store, open_store

EXIT_OK = 0


async def teams_channel_switch_command(args: argparse.Namespace, settings: Settings) -> int:
    async with open_store(settings) as store:
        if args.action == "list":
            channels = await list_teams_channels(store, args.aad_tenant_id)
        else:
            switch, _ = SWITCHES[args.action]
            channels = [
                await set_teams_channel_switch(
                    store,
                    args.aad_tenant_id,
                    args.channel_id,
                    switch,
                    args.state == "on",
                    team_id=getattr(args, "team", None),
                    graph=settings.teams_graph_alerts,
                )
            ]
        graph = {c.channel_id: await _graph_state(store, c) for c in channels}
    for channel in channels:
        state = graph[channel.channel_id]
        if args.json:
            graph_field = {} if state is None else {"graph_subscription": state}
            print(json.dumps(channel_json(channel) | graph_field))
        else:
            print(channel_line(channel) + (f"; Graph: {state}" if state else ""))
    if settings.teams_graph_alerts and any(c.alerts and not graph[c.channel_id] for c in channels):
        print(
            "runbook: alert posts by apps reach the bot through Graph only with the team's id: "
            "run it again with --team GROUP_ID (the groupId= of the channel's link)",
            file=sys.stderr,
        )
    return EXIT_OK


async def _graph_state(store: Store, channel: ChannelSwitches) -> str | None:
    """The channel's Graph subscription in a few words; None when it has none."""
    row = await subscription_row(store, channel.tenant_id, channel.team_id, channel.channel_id)
    if row is None:
        return None
    if not row.wanted:
        return "being deleted"
    if row.last_error:
        return f"failing ({row.last_error})"
    if row.expires_at is None:
        return f"being created (team {row.team_id})"
    return f"live until {row.expires_at:%Y-%m-%d %H:%M} UTC (team {row.team_id})"


def channel_json(channel: ChannelSwitches) -> dict[str, Any]:
    return {
        "aad_tenant_id": channel.team_id,
        "tenant": channel.tenant_id,
        "channel_id": channel.channel_id,
        "alerts": channel.alerts,
        "follow_ups": channel.follow_ups,
    }


def channel_line(channel: ChannelSwitches) -> str:
    def state(on: bool) -> str:
        return "on" if on else "off"

    return (
        f"channel {channel.channel_id} in {channel.team_id} ({channel.tenant_id}): "
        f"alerts {state(channel.alerts)}, follow-ups {state(channel.follow_ups)}"
    )
