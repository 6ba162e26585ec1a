"""``runbook audit --tenant T [--json]`` (every settings change: who, what, when, before →
after) and ``runbook tenant delete T --yes`` (a tenant and everything it owns, at once)."""

from __future__ import annotations

import argparse
import json
import sys

from bot.core.admin.audit import describe_change, recent_changes
from rag import Settings, delete_tenant, open_store, require_tenant

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


async def audit_command(args: argparse.Namespace, settings: Settings) -> int:
    async with open_store(settings) as store:
        await require_tenant(store, args.tenant)
        entries = await recent_changes(store, args.tenant, limit=args.limit)
    if args.json:
        print(json.dumps({"tenant": args.tenant, "changes": [e.as_json() for e in entries]}))
        return EXIT_OK
    if not entries:
        print(f"no settings changes recorded for {args.tenant}")
    for entry in entries:
        when = entry.at.strftime("%Y-%m-%d %H:%M:%S UTC")
        print(f"{when}  {entry.surface}:{entry.actor}  {describe_change(entry)}")
    return EXIT_OK


async def tenant_command(args: argparse.Namespace, settings: Settings) -> int:
    if not args.yes:
        print(
            f"runbook tenant delete: this deletes {args.tenant!r} and all its runbooks, sources, "
            "settings and history; pass --yes to do it",
            file=sys.stderr,
        )
        return EXIT_USAGE
    async with open_store(settings) as store:
        deleted = await delete_tenant(store, args.tenant)
    if not deleted:
        print(f"runbook: no tenant {args.tenant!r}", file=sys.stderr)
        return EXIT_FAILED
    print(f"tenant {args.tenant} deleted")
    return EXIT_OK
