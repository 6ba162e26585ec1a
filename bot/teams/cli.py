"""``runbook teams …``: the AAD tenant allow-list, channel scopes, and the app package; and
``runbook ask --teams-card`` (printed by ``bot.ask_cli``). Registered by ``bot.cli``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from bot.teams.incident.channel_cli import (
    add_channel_switch_commands,
    is_teams_channel_switch,
    teams_channel_switch_command,
)
from bot.teams.tenancy import (
    add_teams_tenant,
    list_teams_tenants,
    map_teams_channel,
    remove_teams_tenant,
)
from rag import Settings, open_store

EXIT_OK, EXIT_FAILED = 0, 1


def add_teams_commands(commands: Any) -> None:
    teams = commands.add_parser("teams", help="Microsoft Teams: tenants, channels, app package")
    sub = teams.add_subparsers(dest="teams_command", required=True)

    tenant = sub.add_parser("tenant", help="allow a Teams organisation (AAD tenant)")
    tenant_sub = tenant.add_subparsers(dest="action", required=True)
    add = tenant_sub.add_parser("add", help="map an AAD tenant to a tenant")
    add.add_argument("aad_tenant_id")
    add.add_argument("tenant")
    tenant_sub.add_parser("list")
    remove = tenant_sub.add_parser("remove")
    remove.add_argument("aad_tenant_id")

    channel = sub.add_parser(
        "channel", help="a Teams channel: its service, alert answers and thread follow-ups"
    )
    channel_sub = channel.add_subparsers(dest="action", required=True)
    channel_map = channel_sub.add_parser("map")
    channel_map.add_argument("aad_tenant_id")
    channel_map.add_argument("channel_id", help="e.g. 19:abc…@thread.tacv2")
    channel_map.add_argument("service")
    add_channel_switch_commands(channel_sub)

    package = sub.add_parser("package", help="write the Teams app package (zip)")
    package.add_argument("--app-id", required=True, help="the Azure bot's Microsoft App ID")
    package.add_argument("--host", required=True, help="public host serving /api/messages")
    package.add_argument("--out", type=Path, default=Path("runbook-bot-teams.zip"))

    commands.choices["ask"].add_argument(
        "--teams-card", action="store_true", help="print the Teams card's Adaptive Card JSON"
    )


async def teams_command(args: argparse.Namespace, settings: Settings) -> int:
    if args.teams_command == "package":
        from bot.teams.package import write_package  # its manifest model is a second of import

        out = write_package(args.app_id, args.host, args.out)
        print(f"wrote {out}: upload it in Teams (Apps › Manage your apps › Upload an app)")
        return EXIT_OK
    if is_teams_channel_switch(args):
        return await teams_channel_switch_command(args, settings)
    async with open_store(settings) as store:
        if args.teams_command == "channel":
            scope = await map_teams_channel(
                store, args.aad_tenant_id, args.channel_id, args.service
            )
            where = f"channel {scope.channel_id} in {scope.team_id} ({scope.tenant_id})"
            print(f"{where} → service {scope.service}")
        elif args.action == "add":
            mapped = await add_teams_tenant(store, args.aad_tenant_id, args.tenant)
            print(f"AAD tenant {mapped.aad_tenant_id} → tenant {mapped.tenant_id}")
        elif args.action == "list":
            for mapped in await list_teams_tenants(store):
                print(f"{mapped.aad_tenant_id} → {mapped.tenant_id}")
        elif not await remove_teams_tenant(store, args.aad_tenant_id):
            print(f"runbook: AAD tenant {args.aad_tenant_id} is not mapped", file=sys.stderr)
            return EXIT_FAILED
        else:
            print(f"AAD tenant {args.aad_tenant_id} removed")
    return EXIT_OK
