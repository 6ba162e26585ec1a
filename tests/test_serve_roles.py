"""``runbook serve --role web|worker|all`` as real processes against the fake Slack: the web role
queues and acks without the model, workers wake on NOTIFY, and killing either role (or one
worker of ``--role all``) mid-burst loses and doubles nothing.

Deliveries go out as Slack sends them (``tests.test_crash_recovery.Mentions``): re-sent only
when a delivery failed, never after a 2xx; every acked mention must get exactly one card.
"""

from __future__ import annotations

import asyncio
import os
import signal
import time
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path

import aiohttp
import pytest

from bench.process_cpu import process_tree
from bench.slack_app_process import AppProcess, app_env, app_process
from rag import IngestReport, Settings, Store, add_workspace
from tests import credentials
from tests.fakes.slack_api import FakeSlack
from tests.test_cpu_priority import kernel_has_custom_slices, slice_ns
from tests.test_crash_recovery import (
    QUEUE_TUNING,
    SECRET,
    Mentions,
    all_answered,
    answers_per_thread,
    assert_each_acked_answered_once,
)


@asynccontextmanager
async def roles(
    database_url: str, settings: Settings, slack: FakeSlack, tmp_path: Path, **extra: str
) -> AsyncIterator[tuple[AsyncExitStack, dict[str, str]]]:
    env = app_env(
        database_url=database_url,
        data_dir=settings.data_dir,
        signing_secret=SECRET,
        bot_token=credentials.SLACK_BOT_TOKEN,
        slack_api_url=slack.base_url,
        onnx_threads=1,
        extra={**QUEUE_TUNING, **extra},
    )
    async with AsyncExitStack() as stack:
        yield stack, env


async def start(stack: AsyncExitStack, env: dict[str, str], role: str, log: Path) -> AppProcess:
    return await stack.enter_async_context(
        app_process(env=env, log_path=log, role=role, ready_within_s=240)
    )


async def health(app: AppProcess) -> dict[str, str]:
    async with aiohttp.ClientSession() as session:
        async with session.get(app.internal_url + "/healthz") as resp:
            body: dict[str, str] = await resp.json()
            return body


def loaded_libraries(pid: int) -> str:
    return Path(f"/proc/{pid}/maps").read_text()


async def answered_within(slack: FakeSlack, channel: str, ts: str, within_s: float) -> float:
    started = time.monotonic()
    while time.monotonic() - started < within_s:
        if answers_per_thread(slack, channel)[ts]:
            return time.monotonic() - started
        await asyncio.sleep(0.05)
    raise AssertionError(f"{ts} was not answered within {within_s} s")


@pytest.mark.slow  # two app processes, one of them loading the model
async def test_web_role_acks_without_the_model_and_a_polling_free_worker_answers_at_once(
    settings: Settings, store: Store, database_url: str, demo_corpus: IngestReport, tmp_path: Path
) -> None:
    await add_workspace(store, "T_ACME", "acme")
    mentions = Mentions("C_ROLES_WAKE")
    # A minute's poll: only a NOTIFY can wake the worker in time.
    async with (
        FakeSlack() as slack,
        roles(database_url, settings, slack, tmp_path, RUNBOOK_JOB_POLL_S="60") as (stack, env),
    ):
        web = await start(stack, env, "web", tmp_path / "web.log")
        await mentions.deliver(0, lambda: [web])
        await asyncio.sleep(1.0)
        assert answers_per_thread(slack, mentions.channel) == {}  # the web role answers nothing
        assert "onnxruntime" not in loaded_libraries(web.pid)
        assert await health(web) == {"status": "ok", "role": "web"}

        worker = await start(stack, env, "worker", tmp_path / "worker.log")
        assert await health(worker) == {"status": "ok", "role": "worker"}
        # What was queued before any worker ran is answered once one listens.
        await answered_within(slack, mentions.channel, mentions.event(0)[1]["ts"], 60)
        await mentions.deliver(1, lambda: [web])
        took = await answered_within(slack, mentions.channel, mentions.event(1)[1]["ts"], 30)
        assert "onnxruntime" not in loaded_libraries(web.pid)
    assert took < 30  # far inside the 60 s poll: the worker was woken
    print(f"roles-wake: second mention answered {took:.2f} s after its ack")


async def burst_with_a_kill(
    slack: FakeSlack,
    mentions: Mentions,
    total: int,
    targets: list[AppProcess],
    kill: asyncio.Event,
) -> None:
    """``total`` mentions, 10 in flight, to the live ``targets``; ``kill`` is set once a third
    were acked (the caller kills then)."""
    gate = asyncio.Semaphore(10)

    def live() -> list[AppProcess]:
        return [app for app in targets if app.process.returncode is None]

    async def send(i: int) -> None:
        async with gate:
            await mentions.deliver(i, live)

    sending = asyncio.gather(*(send(i) for i in range(total)))
    await mentions.reached.wait()
    kill.set()
    await sending


@pytest.mark.slow  # a web and a worker process; the web one SIGKILLed and started again
async def test_killing_the_web_process_mid_burst_loses_and_doubles_nothing(
    settings: Settings, store: Store, database_url: str, demo_corpus: IngestReport, tmp_path: Path
) -> None:
    await add_workspace(store, "T_ACME", "acme")
    total = 45
    mentions = Mentions("C_ROLES_WEB", signal_at=total // 3)
    async with FakeSlack() as slack, roles(database_url, settings, slack, tmp_path) as (s, env):
        await start(s, env, "worker", tmp_path / "worker.log")
        webs = [await start(s, env, "web", tmp_path / "web-0.log")]
        kill = asyncio.Event()

        async def chaos() -> None:
            await kill.wait()
            webs[0].process.kill()  # SIGKILL: requests in flight are cut off
            await webs[0].process.wait()
            webs.append(await start(s, env, "web", tmp_path / "web-1.log"))

        chaos_task = asyncio.create_task(chaos())
        await burst_with_a_kill(slack, mentions, total, webs, kill)
        await chaos_task
        posted = await all_answered(slack, mentions, within_s=60)
    assert webs[0].process.returncode == -signal.SIGKILL
    assert_each_acked_answered_once(posted, mentions, total)


@pytest.mark.slow  # a web and two worker processes; one worker SIGKILLed mid-answer
async def test_killing_a_worker_mid_burst_loses_and_doubles_nothing(
    settings: Settings, store: Store, database_url: str, demo_corpus: IngestReport, tmp_path: Path
) -> None:
    await add_workspace(store, "T_ACME", "acme")
    total = 45
    mentions = Mentions("C_ROLES_WORKER", signal_at=total // 3)
    async with FakeSlack() as slack, roles(database_url, settings, slack, tmp_path) as (s, env):
        victim = await start(s, env, "worker", tmp_path / "worker-0.log")
        web = await start(s, env, "web", tmp_path / "web.log")
        kill = asyncio.Event()

        async def chaos() -> tuple[int, int]:
            await kill.wait()
            before = (len(answers_per_thread(slack, mentions.channel)), len(mentions.acked))
            victim.process.kill()  # mid-answer: its leased jobs must move on
            await victim.process.wait()
            await start(s, env, "worker", tmp_path / "worker-1.log")
            return before

        chaos_task = asyncio.create_task(chaos())
        await burst_with_a_kill(slack, mentions, total, [web], kill)
        answered_before, acked_before = await chaos_task
        posted = await all_answered(slack, mentions, within_s=60)
    assert answered_before < acked_before  # the kill did hit answers in flight
    assert_each_acked_answered_once(posted, mentions, total)


@pytest.mark.slow  # serve --role all: a web process and two workers, one SIGKILLed
async def test_serve_all_restarts_a_killed_worker_and_answers_every_mention_once(
    settings: Settings, store: Store, database_url: str, demo_corpus: IngestReport, tmp_path: Path
) -> None:
    await add_workspace(store, "T_ACME", "acme")
    total = 45
    mentions = Mentions("C_ROLES_ALL", signal_at=total // 3)
    async with (
        FakeSlack() as slack,
        roles(database_url, settings, slack, tmp_path, RUNBOOK_WORKERS="2") as (s, env),
    ):
        app = await start(s, env, "all", tmp_path / "all.log")
        # The workers load the model after the web process answers health: wait for both.
        await mentions.deliver(total, lambda: [app])
        await answered_within(slack, mentions.channel, mentions.event(total)[1]["ts"], 120)
        workers_before = _worker_pids(app)
        # Answer work yields the cores to the ack path (bot.cpu_priority).
        assert [os.getpriority(os.PRIO_PROCESS, pid) for pid in workers_before] == [19, 19]
        if kernel_has_custom_slices():
            assert [slice_ns(pid) for pid in _role_pids(app, b"web")] == [100_000]
        kill = asyncio.Event()

        async def chaos() -> None:
            await kill.wait()
            os.kill(workers_before[0], signal.SIGKILL)

        chaos_task = asyncio.create_task(chaos())
        await burst_with_a_kill(slack, mentions, total, [app], kill)
        await chaos_task
        posted = await all_answered(slack, mentions, within_s=60)
        workers_after = await _two_workers(app, within_s=60)
    supervised = (tmp_path / "all.log").read_text()[-3000:]
    assert len(workers_before) == len(workers_after) == 2, supervised
    assert workers_before[0] not in workers_after  # restarted in its slot
    assert_each_acked_answered_once(posted, mentions, total + 1)


async def _two_workers(app: AppProcess, within_s: float) -> list[int]:
    """The worker pids once the supervisor has both slots filled again (it restarts a dead
    worker after a pause)."""
    deadline = time.monotonic() + within_s
    while True:
        found = _worker_pids(app)
        if len(found) >= 2 or time.monotonic() > deadline:
            return found
        await asyncio.sleep(0.2)


def _worker_pids(app: AppProcess) -> list[int]:
    return _role_pids(app, b"worker")


def _role_pids(app: AppProcess, role: bytes) -> list[int]:
    found = []
    for pid in process_tree(app.pid):
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if role in argv and b"--role" in argv:
            found.append(pid)
    return found
