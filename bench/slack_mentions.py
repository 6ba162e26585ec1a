"""Ack and mention→answer latency of the real Slack app over HTTP, against the fake Slack.

    .venv/bin/python -m bench.slack_mentions [--mentions 200] [--concurrency 10]

Sends signed ``app_mention`` events for acme's golden questions to the app on 127.0.0.1, with at
most ``--concurrency`` conversations in flight (each until its answer is posted), and prints one
JSON object: ack latency (HTTP response to Slack) p50/p99 and mention→answer-posted latency
(request sent → ``chat.postMessage`` received by the fake) p50/p95. Sender, app and fake Slack
share one process and event loop, so these are upper bounds. The corpus is ingested into an
embedded Postgres under ``--data-dir`` (incremental: later runs skip it).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

from pydantic import SecretStr
from slack_sdk.web.async_client import AsyncWebClient

from bot.core.tasks import BackgroundTasks
from rag import Runtime, Settings, add_workspace, open_runtime
from tests.fakes.slack_api import BOT_USER_ID, FakeSlack, SlackSender
from tests.slack_harness import ServedApp, served_app

SECRET = "bench-signing-secret"
WARMUP = 5


def percentile(values: list[float], p: float) -> float:
    """Nearest-rank percentile, in milliseconds rounded to 0.1."""
    ordered = sorted(values)
    return round(ordered[max(0, math.ceil(p / 100 * len(ordered)) - 1)] * 1000, 1)


def golden_questions(path: Path) -> list[str]:
    lines = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return [q["question"] for q in lines if q["tenant"] == "acme" and q["expect"] != "abstain"]


async def run(args: argparse.Namespace) -> dict[str, object]:
    settings = Settings(_env_file=None, data_dir=args.data_dir)  # type: ignore[call-arg]
    settings = settings.model_copy(update={"slack_signing_secret": SecretStr(SECRET)})
    questions = golden_questions(args.golden)
    async with open_runtime(settings) as runtime:
        await runtime.ingest(args.corpus, tenant=None, prune=False, progress=False)
        await add_workspace(runtime.store, "T_BENCH", "acme")
        async with slack_app_on_fake(settings, runtime, "T_BENCH") as bench:
            report = await measure(bench.sender, bench.slack, bench.served.tasks, questions, args)
    return {**report, "answerer": runtime.service.answerer.name}


@dataclass(frozen=True)
class SlackBench:
    slack: FakeSlack
    served: ServedApp
    sender: SlackSender


@asynccontextmanager
async def slack_app_on_fake(
    settings: Settings, runtime: Runtime, team: str
) -> AsyncIterator[SlackBench]:
    """The Slack app as ``runbook serve`` builds it, calling a fake Slack with ``team``'s bot
    token, and a sender that signs events as Slack does (``settings`` holds ``SECRET``)."""
    async with FakeSlack() as slack:
        client = AsyncWebClient(token=f"xoxb-{team}", base_url=slack.base_url)
        async with served_app(
            settings=settings, service=runtime.service, store=runtime.store, client=client
        ) as served:
            yield SlackBench(slack, served, SlackSender(served.events_url, SECRET))


async def measure(
    sender: SlackSender,
    slack: FakeSlack,
    tasks: BackgroundTasks,
    questions: list[str],
    args: argparse.Namespace,
) -> dict[str, object]:
    sent_at: dict[str, float] = {}
    acks: list[float] = []
    gate = asyncio.Semaphore(args.concurrency)

    async def mention(i: int, record: bool) -> None:
        # ``concurrency`` conversations at a time, each one in flight until its answer is posted.
        async with gate:
            ts = f"{1800000000 + i}.{abs(i):06d}"
            text = f"<@{BOT_USER_ID}> {questions[i % len(questions)]}"
            event = {"type": "app_mention", "user": "U_BENCH", "channel": "C_BENCH", "ts": ts}
            started = time.monotonic()
            reply = await sender.event({**event, "text": text}, team_id="T_BENCH")
            assert reply.status == 200, reply
            await slack.wait_for("chat.postMessage", where=lambda c: c.body["thread_ts"] == ts)
            if record:
                sent_at[ts] = started
                acks.append(reply.seconds)

    await asyncio.gather(*(mention(-1 - i, record=False) for i in range(WARMUP)))
    await slack.wait_for("chat.postMessage", WARMUP, within_s=60)
    await tasks.drain(60)
    started = time.monotonic()
    await asyncio.gather(*(mention(i, record=True) for i in range(args.mentions)))
    await slack.wait_for("chat.postMessage", WARMUP + args.mentions, within_s=600)
    await tasks.drain(60)
    wall = time.monotonic() - started
    posted = {c.body["thread_ts"]: c.at for c in slack.calls_to("chat.postMessage")}
    answers = [posted[ts] - sent for ts, sent in sent_at.items()]
    return {
        "mentions": args.mentions,
        "concurrency": args.concurrency,
        "ack_ms": {"p50": percentile(acks, 50), "p99": percentile(acks, 99)},
        "mention_to_answer_posted_ms": {
            "p50": percentile(answers, 50),
            "p95": percentile(answers, 95),
        },
        "answers_posted": len(posted) - WARMUP,
        "throughput_per_s": round(args.mentions / wall, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mentions", type=int, default=200)
    parser.add_argument("--concurrency", type=int, default=10)
    parser.add_argument("--corpus", type=Path, default=Path("corpus"))
    parser.add_argument("--golden", type=Path, default=Path("evals/golden.jsonl"))
    parser.add_argument("--data-dir", type=Path, default=Path("/tmp/runbook-bench"))
    print(json.dumps(asyncio.run(run(parser.parse_args()))))


if __name__ == "__main__":
    main()
