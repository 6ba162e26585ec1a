"""``runbook channel alerts|follow-ups TEAM CHANNEL on|off [--enterprise E]``: a channel's
unprompted answers, both off until switched on.

Its options sit beside rag's ``runbook channel map`` (``bot.cli_parser``); the workspace must
already be mapped to a tenant (``runbook workspace add``, with ``--enterprise`` for an Enterprise
Grid org or an org-wide install), whose runbooks the channel's answers then come from.
"""

from __future__ import annotations

import argparse
import sys

from bot.cli_parser import SWITCHES
from bot.core.alerts.channel_settings import set_channel_switch
from rag import Settings, find_tenant, open_store, unmapped_workspace

EXIT_OK, EXIT_USAGE = 0, 2


async def channel_switch_command(args: argparse.Namespace, settings: Settings) -> int:
    switch, _ = SWITCHES[args.action]
    on = args.state == "on"
    async with open_store(settings) as store:
        tenant = await find_tenant(store, team_id=args.team_id, enterprise_id=args.enterprise)
        if tenant is None:
            print(f"runbook: {unmapped_workspace(args.team_id, args.enterprise)}", file=sys.stderr)
            return EXIT_USAGE
        await set_channel_switch(store, tenant, args.team_id, args.channel_id, switch, on)
    print(f"channel {args.channel_id} in {args.team_id} ({tenant}): {args.action} {args.state}")
    return EXIT_OK
