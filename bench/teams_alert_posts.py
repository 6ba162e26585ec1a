"""Incident-channel latency of the real Teams app over HTTP, against the fake Bot Connector: the
Teams twin of ``bench.alert_posts`` (same phases, same output keys, ``surface: teams``).

    .venv/bin/python -m bench.teams_alert_posts [--alerts 200] [--mentions 200] [--concurrency 10]

``--mentions`` channel @mentions of acme's golden questions, timing the first progress signal the
fake receives in each thread (the typing activity, else the "Searching runbooks…" card); then
``--alerts`` Alertmanager posts shaped as ``msteamsv2_configs`` sends them through a Workflows
webhook (an Adaptive Card posted by Workflows, no mention) over ``--channels`` channels with
alerts on, each a distinct alert (its own instance label), timing post → automatic card in its
thread. Sender, app and fake share one process and event loop on a shared machine, so these are
upper bounds; ``/proc/loadavg`` before and after is printed with them.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
import uuid
from pathlib import Path
from typing import Any

from bench.alert_posts import loadavg
from bench.slack_mentions import golden_questions, percentile
from bot.core.alerts.channel_settings import set_channel_switch
from bot.teams.tenancy import add_teams_tenant
from rag import Settings, open_runtime
from tests.fakes.bot_connector import FakeBotConnector
from tests.teams_harness import (
    ADAPTIVE,
    WORKFLOWS,
    ServedTeams,
    channel_post,
    mention,
    served_teams,
    teams_settings,
)

AAD = "5c0ffee0-bbbb-4ccc-8ddd-0123456789ab"


def workflows_alert(instance: str) -> dict[str, Any]:
    text = (
        "Labels:\n  - alertname = KafkaConsumerLagHigh\n  - service = kafka\n"
        f"  - instance = {instance}\nAnnotations:\n  - summary = Consumer group lag is growing."
    )
    card = {
        "type": "AdaptiveCard",
        "version": "1.2",
        "body": [
            {"type": "TextBlock", "text": f"[FIRING:1] KafkaConsumerLagHigh ({instance})"},
            {"type": "TextBlock", "text": text, "wrap": True},
        ],
    }
    return {"contentType": ADAPTIVE, "content": card}


async def run(args: argparse.Namespace) -> dict[str, object]:
    settings = Settings(_env_file=None, data_dir=args.data_dir)  # type: ignore[call-arg]
    questions = golden_questions(args.golden)
    async with open_runtime(settings) as runtime, FakeBotConnector() as connector:
        await runtime.ingest(args.corpus, tenant=None, prune=False, progress=False)
        await add_teams_tenant(runtime.store, AAD, "acme")
        channels = [f"19:bench-alerts-{i:03d}@thread.tacv2" for i in range(args.channels)]
        for channel in channels:
            await set_channel_switch(runtime.store, "acme", AAD, channel, "alerts", True)
        local = teams_settings(settings, jwks_url="http://127.0.0.1:9/keys", local=True)
        async with served_teams(
            settings=local, service=runtime.service, store=runtime.store
        ) as app:
            before = loadavg()
            progress = await measure_progress(app, connector, questions, args)
            cards = await measure_alerts(app, connector, channels, args)
            after = loadavg()
    return {
        "surface": "teams",
        **progress,
        **cards,
        "concurrency": args.concurrency,
        "answerer": runtime.service.answerer.name,
        "loadavg_before": before,
        "loadavg_after": after,
    }


async def measure_progress(
    app: ServedTeams, connector: FakeBotConnector, questions: list[str], args: argparse.Namespace
) -> dict[str, object]:
    sent_at: dict[str, float] = {}
    gate = asyncio.Semaphore(args.concurrency)

    async def ask(i: int) -> None:
        async with gate:
            activity = mention(
                questions[i % len(questions)], service_url=connector.service_url, aad_tenant=AAD
            )
            thread = activity["conversation"]["id"]
            sent_at[thread] = time.monotonic()
            status, _, _ = await app.send(activity)
            assert 200 <= status < 300, status
            await connector.wait_for_messages(thread, 1, within_s=600, settle=0)

    await asyncio.gather(*(ask(i) for i in range(args.mentions)))
    await app.tasks.drain(60)
    signals: dict[str, float] = {}
    for call in connector.calls:
        if call.kind in ("typing", "send", "reply") and call.conversation in sent_at:
            signals.setdefault(call.conversation, call.at)
    latencies = [signals[c] - sent for c, sent in sent_at.items() if c in signals]
    return {
        "mentions": args.mentions,
        "mentions_with_progress_signal": len(latencies),
        "progress_signal_ms": {"p50": percentile(latencies, 50), "p95": percentile(latencies, 95)},
    }


async def measure_alerts(
    app: ServedTeams, connector: FakeBotConnector, channels: list[str], args: argparse.Namespace
) -> dict[str, object]:
    run_id = uuid.uuid4().hex[:6]  # fresh alerts each run: earlier ones are inside the window
    sent_at: dict[str, float] = {}
    gate = asyncio.Semaphore(args.concurrency)

    async def post(i: int) -> None:
        async with gate:
            activity = channel_post(
                service_url=connector.service_url,
                aad_tenant=AAD,
                channel=channels[i % len(channels)],
                sender=WORKFLOWS,
                attachments=(workflows_alert(f"broker-{run_id}-{i}"),),
            )
            thread = activity["conversation"]["id"]
            sent_at[thread] = time.monotonic()
            status, _, _ = await app.send(activity)
            assert 200 <= status < 300, status
            await connector.wait_for_messages(thread, 1, within_s=600, settle=0)

    started = time.monotonic()
    await asyncio.gather(*(post(i) for i in range(args.alerts)))
    wall = time.monotonic() - started
    await app.tasks.drain(60)
    posted = {m.conversation: m.posted_at for m in connector.messages()}
    latencies = [posted[c] - sent for c, sent in sent_at.items() if c in posted]
    return {
        "alerts": args.alerts,
        "alert_channels": len(channels),
        "alert_cards_posted": len(latencies),
        "alert_post_to_card_ms": {
            "p50": percentile(latencies, 50),
            "p95": percentile(latencies, 95),
        },
        "alerts_per_s": round(args.alerts / wall, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--alerts", type=int, default=200)
    parser.add_argument("--mentions", type=int, default=200)
    parser.add_argument("--channels", type=int, default=20)
    parser.add_argument("--concurrency", type=int, default=10)
    parser.add_argument("--corpus", type=Path, default=Path("corpus"))
    parser.add_argument("--golden", type=Path, default=Path("evals/golden.jsonl"))
    parser.add_argument("--data-dir", type=Path, default=Path("/tmp/runbook-bench-teams"))
    print(json.dumps(asyncio.run(run(parser.parse_args()))))


if __name__ == "__main__":
    main()
