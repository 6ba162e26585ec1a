"""``runbook teams channel alerts|follow-ups AAD_TENANT_ID CHANNEL_ID on|off [--json]`` and
``runbook teams channel list AAD_TENANT_ID [--json]``: a Teams channel's unprompted answers,
both off until switched on (the same switches ``runbook channel alerts|follow-ups`` sets for
Slack). Registered by ``bot.teams.cli``."""

from __future__ import annotations

import argparse
import json
from typing import Any

from bot.channel_cli import SWITCHES
from bot.core.channel_settings import ChannelSwitches
from bot.teams.channels import list_teams_channels, set_teams_channel_switch
from rag import Settings, open_store

EXIT_OK = 0


def add_channel_switch_commands(channel_sub: Any) -> None:
    """``alerts``, ``follow-ups`` and ``list`` beside ``teams channel map``."""
    for name, (_, help_text) in SWITCHES.items():
        parser = channel_sub.add_parser(name, help=help_text)
        parser.add_argument("aad_tenant_id")
        parser.add_argument("channel_id", help="e.g. 19:abc…@thread.tacv2")
        parser.add_argument("state", choices=["on", "off"])
        parser.add_argument("--json", action="store_true", help="print the channel as JSON")
    listing = channel_sub.add_parser("list", help="channels with alerts or follow-ups set")
    listing.add_argument("aad_tenant_id")
    listing.add_argument("--json", action="store_true", help="one JSON object per line")


def is_teams_channel_switch(args: argparse.Namespace) -> bool:
    return args.teams_command == "channel" and (args.action in SWITCHES or args.action == "list")


async def teams_channel_switch_command(args: argparse.Namespace, settings: Settings) -> int:
    async with open_store(settings) as store:
        if args.action == "list":
            channels = await list_teams_channels(store, args.aad_tenant_id)
        else:
            switch, _ = SWITCHES[args.action]
            channels = [
                await set_teams_channel_switch(
                    store, args.aad_tenant_id, args.channel_id, switch, args.state == "on"
                )
            ]
    for channel in channels:
        print(json.dumps(channel_json(channel)) if args.json else channel_line(channel))
    return EXIT_OK


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
