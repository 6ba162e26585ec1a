"""App Home publish time: ``app_home_opened`` → ``views.publish`` for a tenant with 50 channels
and 10 sources, through the real Slack app over HTTP against the fake Slack.

    .venv/bin/python -m bench.app_home [--opens 40] [--channels 50] [--sources 10]

Prints one JSON object: the publish time (signed event sent → ``views.publish`` received by the
fake) of the first open (nothing cached) and p50/p95/max of the rest, for an admin's page and a
member's, with the admin page's block count (Slack allows 100). Each open reads the tenant's
sources, channel switches, owners, gaps, admins and audit log from Postgres and asks the fake
Slack for the person (``users.info``) and the bot's channels (``users.conversations``, cached
30 s). The store is an embedded Postgres under ``--data-dir``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import time
import uuid
from pathlib import Path

from psycopg.types.json import Jsonb
from pydantic import SecretStr
from slack_sdk.web.async_client import AsyncWebClient

from bot.core.admin.admins import Actor
from bot.core.admin.changes import SettingsChanges
from rag import Settings, Store, add_source, add_workspace, delete_tenant, open_runtime
from tests.fakes.slack_api import FakeSlack, SlackSender
from tests.slack_harness import served_app

SECRET = "bench-signing-secret"
TEAM, ADMIN, MEMBER = "T_HOME", "U_HOMEADMIN", "U_HOMEMEMBER"


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return round(ordered[max(0, math.ceil(p / 100 * len(ordered)) - 1)] * 1000, 1)


async def prepare(store: Store, tenant: str, channels: list[str], sources: int) -> None:
    await add_workspace(store, TEAM, tenant)
    changes, admin = SettingsChanges(store), Actor("slack", ADMIN, platform_admin=True)
    for i, channel in enumerate(channels):
        if i % 2 == 0:
            await changes.set_channel_switch(tenant, admin, TEAM, channel, "alerts", True)
    report = {"documents": {"added": 40}, "skipped": [{"path": "x.bin", "reason": "binary"}]}
    for i in range(sources):
        row = await add_source(
            store,
            tenant=tenant,
            name=f"runbooks-{i}",
            kind="git",
            settings={
                "url": f"https://git.example.com/ops/runbooks-{i}.git",
                "branch": "main",
                "path": "",
            },
            credential=None,
            webhook_secret={"secret": "bench"},
        )
        async with store.pool.connection() as conn:
            await conn.execute(
                "UPDATE sources SET last_sync_at = now(), last_outcome = 'synced', "
                "last_report = %s WHERE source_id = %s",
                (Jsonb(report), row.source_id),
            )


async def opens(sender: SlackSender, slack: FakeSlack, user: str, n: int) -> list[float]:
    seconds = []
    for _ in range(n):
        before = len([c for c in slack.calls_to("views.publish") if c.body.get("user_id") == user])
        started = time.monotonic()
        event = {"type": "app_home_opened", "user": user, "channel": "D1", "tab": "home"}
        reply = await sender.event({**event, "event_ts": f"{time.time():.6f}"}, team_id=TEAM)
        assert reply.status == 200, reply
        [*_, last] = await slack.wait_for(
            "views.publish", before + 1, where=lambda c: c.body.get("user_id") == user
        )
        seconds.append(last.at - started)
    return seconds


async def run(args: argparse.Namespace) -> dict[str, object]:
    settings = Settings(_env_file=None, data_dir=args.data_dir)  # type: ignore[call-arg]
    settings = settings.model_copy(update={"slack_signing_secret": SecretStr(SECRET)})
    tenant = f"home-{uuid.uuid4().hex[:8]}"
    channels = [f"C{i:08d}" for i in range(args.channels)]
    async with open_runtime(settings) as runtime, FakeSlack() as slack:
        await prepare(runtime.store, tenant, channels, args.sources)
        slack.bot_channels = [(c, f"incident-{i:02d}") for i, c in enumerate(channels)]
        slack.workspace_admins = {ADMIN}
        client = AsyncWebClient(token=f"xoxb-{TEAM}", base_url=slack.base_url)
        async with served_app(
            settings=settings, service=runtime.service, store=runtime.store, client=client
        ) as served:
            sender = SlackSender(served.events_url, SECRET)
            [first] = await opens(sender, slack, ADMIN, 1)
            admin = await opens(sender, slack, ADMIN, args.opens)
            member = await opens(sender, slack, MEMBER, args.opens)
        [*_, page] = [c for c in slack.calls_to("views.publish") if c.body.get("user_id") == ADMIN]
        await delete_tenant(runtime.store, tenant)
    return {
        "channels": args.channels,
        "sources": args.sources,
        "opens": args.opens,
        "admin_page_blocks": len(page.body["view"]["blocks"]),
        "first_open_publish_ms": round(first * 1000, 1),
        "admin_publish_ms": {p: percentile(admin, n) for p, n in (("p50", 50), ("p95", 95))}
        | {"max": round(max(admin) * 1000, 1)},
        "member_publish_ms": {p: percentile(member, n) for p, n in (("p50", 50), ("p95", 95))}
        | {"max": round(max(member) * 1000, 1)},
        "target_p95_ms": 1000,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--opens", type=int, default=40)
    parser.add_argument("--channels", type=int, default=50)
    parser.add_argument("--sources", type=int, default=10)
    parser.add_argument("--data-dir", type=Path, default=Path("/tmp/runbook-bench"))
    print(json.dumps(asyncio.run(run(parser.parse_args()))))


if __name__ == "__main__":
    main()
