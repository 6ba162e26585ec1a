"""SIGTERM: stop listening, drain answers in flight for RUNBOOK_DRAIN_TIMEOUT_S, then stop — in
time for Docker's default 10 s stop timeout."""

from __future__ import annotations

import asyncio
import os
import signal
import time

from bot.core.jobs.metrics import JobMetrics
from bot.core.jobs.queue import JobQueue
from bot.core.jobs.worker import JobHandlers, JobWorker
from bot.core.metrics import BotMetrics
from bot.core.tasks import BackgroundTasks
from bot.server import build_internal_app, build_web_app, run_http
from rag import RagMetrics, Settings, Store

DOCKER_STOP_TIMEOUT_S = 10.0


def test_the_default_drain_ends_before_dockers_default_stop_timeout() -> None:
    assert Settings.model_validate({}).drain_timeout_s < DOCKER_STOP_TIMEOUT_S


async def test_sigterm_cancels_an_answer_still_running_after_the_configured_drain(
    settings: Settings, store: Store
) -> None:
    tasks = BackgroundTasks()

    async def stuck_answer() -> None:
        tasks.adopt_current()
        await asyncio.sleep(3600)

    answer = asyncio.create_task(stuck_answer())
    await asyncio.sleep(0)
    quick = settings.model_copy(
        update={"drain_timeout_s": 0.5, "host": "127.0.0.1", "port": 0, "internal_port": 0}
    )
    internal = build_internal_app(store=store, rag_metrics=RagMetrics(), bot_metrics=BotMetrics())
    jobs = await JobQueue.open(store, quick)
    worker = JobWorker(jobs, JobHandlers(), tasks=tasks, metrics=JobMetrics(BotMetrics().registry))
    try:
        running = asyncio.create_task(
            run_http(build_web_app(), internal, settings=quick, tasks=tasks, worker=worker)
        )
        await asyncio.sleep(0.3)  # listening, signal handlers installed
        started = time.monotonic()
        os.kill(os.getpid(), signal.SIGTERM)
        await asyncio.wait_for(running, timeout=5)
    finally:
        await jobs.close()

    assert 0.5 <= time.monotonic() - started < 3
    assert answer.cancelled()
