"""Incident-channel latency of the real Slack app over HTTP, against the fake Slack.

    .venv/bin/python -m bench.alert_posts [--alerts 200] [--mentions 200] [--concurrency 10]

Two phases, each with at most ``--concurrency`` items in flight (each until its card is posted):
``--mentions`` signed ``app_mention`` events for acme's golden questions, timing the first
progress signal the fake receives for each (``assistant.threads.setStatus`` in its thread, or
the 🔍 reaction on it); then ``--alerts`` Alertmanager posts (``message`` events from an
integration) over ``--channels`` opted-in channels, each a distinct alert (its own instance
label), timing post → automatic card in its thread. Prints one JSON object with p50/p95 of
both and ``/proc/loadavg`` before and after: sender, app and fake share one process and event
loop on a shared machine, so these are upper bounds. The corpus is ingested into an embedded
Postgres under ``--data-dir`` (incremental: later runs skip it).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
import uuid
from pathlib import Path
from typing import Any

from pydantic import SecretStr

from bench.slack_mentions import SECRET, golden_questions, percentile, slack_app_on_fake
from bot.core.alerts.channel_settings import set_channel_switch
from bot.core.tasks import BackgroundTasks
from rag import Settings, add_workspace, open_runtime
from tests.fakes.slack_api import BOT_USER_ID, FakeSlack, SlackCall, SlackSender

TEAM = "T_BENCH"
ALERT_TEXT = (
    "*Alert:* Consumer group lag is growing - `warning`\n*Details:*\n"
    " • *alertname:* `KafkaConsumerLagHigh`\n • *service:* `kafka`\n • *instance:* `{instance}`"
)


def loadavg() -> str:
    return Path("/proc/loadavg").read_text().strip()


def alert_event(channel: str, ts: str, instance: str) -> dict[str, Any]:
    title = f"[FIRING:1] KafkaConsumerLagHigh (fulfilment-service {instance})"
    attachment = {"color": "danger", "title": title, "text": ALERT_TEXT.format(instance=instance)}
    return {
        "type": "message",
        "subtype": "bot_message",
        "bot_id": "B_AM",
        "username": "alertmanager",
        "channel": channel,
        "channel_type": "channel",
        "ts": ts,
        "event_ts": ts,
        "text": "",
        "attachments": [attachment],
    }


async def run(args: argparse.Namespace) -> dict[str, object]:
    settings = Settings(_env_file=None, data_dir=args.data_dir)  # type: ignore[call-arg]
    settings = settings.model_copy(update={"slack_signing_secret": SecretStr(SECRET)})
    questions = golden_questions(args.golden)
    async with open_runtime(settings) as runtime:
        await runtime.ingest(args.corpus, tenant=None, prune=False, progress=False)
        await add_workspace(runtime.store, TEAM, "acme")
        channels = [f"C_BENCH_ALERTS{i:03d}" for i in range(args.channels)]
        for channel in channels:
            await set_channel_switch(runtime.store, "acme", TEAM, channel, "alerts", True)
        async with slack_app_on_fake(settings, runtime, TEAM) as bench:
            sender, slack, tasks = bench.sender, bench.slack, bench.served.tasks
            before = loadavg()
            progress = await measure_progress(sender, slack, tasks, questions, args)
            cards = await measure_alerts(sender, slack, tasks, channels, args)
            after = loadavg()
    return {
        **progress,
        **cards,
        "concurrency": args.concurrency,
        "answerer": runtime.service.answerer.name,
        "loadavg_before": before,
        "loadavg_after": after,
    }


async def measure_progress(
    sender: SlackSender,
    slack: FakeSlack,
    tasks: BackgroundTasks,
    questions: list[str],
    args: argparse.Namespace,
) -> dict[str, object]:
    sent_at: dict[str, float] = {}
    gate = asyncio.Semaphore(args.concurrency)

    async def mention(i: int) -> None:
        async with gate:
            ts = f"{args.stamp}.{i:06d}"
            text = f"<@{BOT_USER_ID}> {questions[i % len(questions)]}"
            event = {"type": "app_mention", "user": "U_BENCH", "channel": "C_BENCH", "ts": ts}
            sent_at[ts] = time.monotonic()
            reply = await sender.event({**event, "text": text}, team_id=TEAM)
            assert reply.status == 200, reply
            await slack.wait_for(
                "chat.postMessage", where=lambda c: c.body["thread_ts"] == ts, within_s=600
            )

    await asyncio.gather(*(mention(i) for i in range(args.mentions)))
    await tasks.drain(60)
    signals: dict[str, float] = {}
    for call in slack.calls:
        ts = _signal_ts(call)
        if ts in sent_at and ts not in signals:
            signals[ts] = call.at
    latencies = [signals[ts] - sent for ts, sent in sent_at.items() if ts in signals]
    return {
        "mentions": args.mentions,
        "mentions_with_progress_signal": len(latencies),
        "progress_signal_ms": {"p50": percentile(latencies, 50), "p95": percentile(latencies, 95)},
    }


def _signal_ts(call: SlackCall) -> str | None:
    if call.method == "assistant.threads.setStatus" and call.body.get("status"):
        return str(call.body.get("thread_ts"))
    if call.method == "reactions.add":
        return str(call.body.get("timestamp"))
    return None


async def measure_alerts(
    sender: SlackSender,
    slack: FakeSlack,
    tasks: BackgroundTasks,
    channels: list[str],
    args: argparse.Namespace,
) -> dict[str, object]:
    run_id = uuid.uuid4().hex[:6]  # fresh alerts each run: earlier ones are inside the window
    sent_at: dict[str, float] = {}
    gate = asyncio.Semaphore(args.concurrency)

    async def post(i: int) -> None:
        async with gate:
            ts = f"{args.stamp}.{500_000 + i:06d}"
            event = alert_event(channels[i % len(channels)], ts, f"broker-{run_id}-{i}")
            sent_at[ts] = time.monotonic()
            reply = await sender.event(event, team_id=TEAM)
            assert reply.status == 200, reply
            await slack.wait_for(
                "chat.postMessage", where=lambda c: c.body.get("thread_ts") == ts, within_s=600
            )

    started = time.monotonic()
    await asyncio.gather(*(post(i) for i in range(args.alerts)))
    wall = time.monotonic() - started
    await tasks.drain(60)
    posted = {str(c.body.get("thread_ts")): c.at for c in slack.calls_to("chat.postMessage")}
    latencies = [posted[ts] - sent for ts, sent in sent_at.items() if ts in posted]
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
    parser.add_argument("--data-dir", type=Path, default=Path("/tmp/runbook-bench"))
    args = parser.parse_args()
    # Message ts of this run: a message is answered once per workspace, channel and ts, and that
    # claim is durable, so a rerun on the same database needs its own.
    args.stamp = int(time.time())
    print(json.dumps(asyncio.run(run(args))))


if __name__ == "__main__":
    main()
