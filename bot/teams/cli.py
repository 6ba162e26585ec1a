"""``runbook teams …``: the AAD tenant allow-list, channel scopes, and the app package; and
``runbook ask --teams-card`` (printed by ``bot.ask_cli``). Options in ``bot.cli_parser``."""

from __future__ import annotations

import argparse
import sys

from bot.cli_parser import is_teams_channel_switch
from bot.teams.incident.channel_cli import teams_channel_switch_command
from bot.teams.tenancy import (
    add_teams_tenant,
    list_teams_tenants,
    map_teams_channel,
    remove_teams_tenant,
)
from rag import Settings, open_store

EXIT_OK, EXIT_FAILED = 0, 1


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
