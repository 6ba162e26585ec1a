"""The real Slack app served over HTTP on 127.0.0.1, for end-to-end tests against a fake Slack."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

from slack_sdk.web.async_client import AsyncWebClient

from bot.core.jobs.metrics import JobMetrics
from bot.core.jobs.queue import JobQueue
from bot.core.jobs.worker import JobHandlers, JobWorker
from bot.core.metrics import BotMetrics
from bot.core.tasks import BackgroundTasks
from bot.server import build_internal_app, build_web_app, serving, working
from bot.slack.app import build_app
from bot.slack.routes import EVENTS_PATH, slack_routes
from rag import RagService, Settings, Store


@dataclass(frozen=True)
class ServedApp:
    url: str
    events_url: str
    internal_url: str  # /healthz and /metrics
    tasks: BackgroundTasks
    metrics: BotMetrics
    jobs: JobQueue


@asynccontextmanager
async def served_app(
    *, settings: Settings, service: RagService, store: Store, client: AsyncWebClient
) -> AsyncIterator[ServedApp]:
    """Build the app exactly as ``runbook serve`` does (its job worker included) and serve it
    on a free port.

    On exit every background answer must have finished: a test never leaves work behind.
    """
    metrics, handlers = BotMetrics(), JobHandlers()
    await forget_unfinished_jobs(store)
    jobs = await JobQueue.open(store, settings)
    tasks = SettlingTasks(jobs)
    try:
        app = build_app(
            settings=settings,
            service=service,
            store=store,
            client=client,
            tasks=tasks,
            metrics=metrics,
            jobs=jobs,
            job_handlers=handlers,
        )
        worker = JobWorker(jobs, handlers, tasks=tasks, metrics=JobMetrics(metrics.registry))
        web_app = build_web_app(surfaces=[slack_routes(app, metrics)])
        internal_app = build_internal_app(
            store=store, rag_metrics=service.metrics, bot_metrics=metrics, database=jobs.database
        )
        async with (
            working(worker, tasks, drain_s=settings.drain_timeout_s),
            serving(web_app, host="127.0.0.1", port=0) as port,
            serving(internal_app, host="127.0.0.1", port=0) as internal_port,
        ):
            url = f"http://127.0.0.1:{port}"
            internal_url = f"http://127.0.0.1:{internal_port}"
            yield ServedApp(url, url + EVENTS_PATH, internal_url, tasks, metrics, jobs)
            assert await tasks.drain(10) == 0
    finally:
        await jobs.close()
        await forget_unfinished_jobs(store)


class SettlingTasks(BackgroundTasks):
    """``drain`` that first waits for the queue to settle: what a test means by "every answer
    in flight has finished" now includes jobs accepted but not claimed yet, and re-runs."""

    def __init__(self, jobs: JobQueue) -> None:
        super().__init__()
        self.jobs = jobs

    async def drain(self, timeout_s: float) -> int:
        deadline = time.monotonic() + timeout_s
        while await self._queue_busy():
            if time.monotonic() > deadline:
                break
            await asyncio.sleep(0.02)
        return await super().drain(max(deadline - time.monotonic(), 0.1))

    async def _queue_busy(self) -> bool:
        if self.jobs.held:
            return True
        async with self.jobs.store.pool.connection() as conn:
            cur = await conn.execute(
                "SELECT EXISTS (SELECT FROM jobs WHERE state IN ('queued', 'running'))"
            )
            row = await cur.fetchone()
        return bool(row and row[0])


async def forget_unfinished_jobs(store: Store) -> None:
    """Tests share one database: a job one test left queued must not be answered in the next."""
    async with store.pool.connection() as conn:
        await conn.execute("DELETE FROM jobs WHERE state IN ('queued', 'running')")
