"""``runbook channel alerts|follow-ups TEAM CHANNEL on|off [--enterprise E]``: a channel's
unprompted answers, both off until switched on.

Added beside rag's ``runbook channel map`` by ``bot.cli``; the workspace must already be mapped
to a tenant (``runbook workspace add``, with ``--enterprise`` for an Enterprise Grid org or an
org-wide install), whose runbooks the channel's answers then come from.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from bot.core.alerts.channel_settings import Switch, set_channel_switch
from rag import Settings, find_tenant, open_store

EXIT_OK, EXIT_USAGE = 0, 2
# CLI action → stored switch, and what it does (the help text).
SWITCHES: dict[str, tuple[Switch, str]] = {
    "alerts": ("alerts", "answer new alert posts in the channel's threads (default off)"),
    "follow-ups": (
        "follow_ups",
        "answer follow-up questions in threads the bot answered, without a mention (default off)",
    ),
}


def add_channel_switches(commands: Any) -> None:
    """Add the switches to the ``channel`` command's subcommands (beside ``map``)."""
    channel: argparse.ArgumentParser = commands.choices["channel"]
    actions = next(a for a in channel._actions if isinstance(a, argparse._SubParsersAction))
    for name, (_, help_text) in SWITCHES.items():
        parser = actions.add_parser(name, help=help_text)
        parser.add_argument("team_id")
        parser.add_argument("channel_id")
        parser.add_argument("state", choices=["on", "off"])
        parser.add_argument("--enterprise", default="", help="Enterprise Grid org id (E…)")


def is_channel_switch(args: argparse.Namespace) -> bool:
    return args.command == "channel" and args.action in SWITCHES


async def channel_switch_command(args: argparse.Namespace, settings: Settings) -> int:
    switch, _ = SWITCHES[args.action]
    on = args.state == "on"
    async with open_store(settings) as store:
        tenant = await find_tenant(store, team_id=args.team_id, enterprise_id=args.enterprise)
        if tenant is None:
            org = f" in enterprise {args.enterprise}" if args.enterprise else ""
            print(
                f"runbook: workspace {args.team_id}{org} is not mapped to a tenant; "
                "run `runbook workspace add` first (with --enterprise for Enterprise Grid)",
                file=sys.stderr,
            )
            return EXIT_USAGE
        await set_channel_switch(store, tenant, args.team_id, args.channel_id, switch, on)
    print(f"channel {args.channel_id} in {args.team_id} ({tenant}): {args.action} {args.state}")
    return EXIT_OK
