"""``JobWorker``: claims jobs with a lease, keeps the lease alive while they run, and lets go.

One per ``runbook serve``. It claims only while it has a free slot (``job_concurrency``), so a
busy replica leaves work to idle ones; the answer pipeline's own slots still bound CPU work.
A job past its deadline, or out of attempts, goes to its handler's ``give_up`` (a visible
"could not answer in time" card) instead of ``run``. On shutdown it stops claiming; what the
drain cancels is handed back to the queue at once for another replica, never dropped.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Protocol

import psycopg

from bot.core.job_metrics import JobMetrics
from bot.core.jobs import Job, JobQueue
from bot.core.tasks import BackgroundTasks
from rag import StoreError

logger = logging.getLogger(__name__)

_MAINTENANCE_EVERY_S = 2.0
_PRUNE_EVERY_S = 300.0
_MAX_BACKOFF_S = 30.0
# The database is unreachable: that is what the queue waits out, not a bug in a handler.
_DB_DOWN = (psycopg.Error, StoreError, TimeoutError)


class JobHandler(Protocol):
    """What a surface registers per job kind. ``run`` may be called again for the same job
    (``job.rerun``) after a crash, so it must find what an earlier run already posted."""

    async def run(self, job: Job) -> None: ...

    async def give_up(self, job: Job) -> None: ...


class JobHandlers:
    """Job kind → handler; each surface registers its kinds (``slack.mention``, …)."""

    def __init__(self) -> None:
        self._handlers: dict[str, JobHandler] = {}

    def register(self, kind: str, handler: JobHandler) -> None:
        if kind in self._handlers:
            raise ValueError(f"job kind {kind!r} is registered twice")
        self._handlers[kind] = handler

    def get(self, kind: str) -> JobHandler | None:
        return self._handlers.get(kind)


class JobWorker:
    def __init__(
        self,
        queue: JobQueue,
        handlers: JobHandlers,
        *,
        tasks: BackgroundTasks,
        metrics: JobMetrics,
    ) -> None:
        self.queue = queue
        self.handlers = handlers
        self.tasks = tasks
        self.metrics = metrics
        self._settings = queue.settings
        self._running = 0
        self._slot_freed = asyncio.Event()
        self._stopping = False

    def stop(self) -> None:
        """Claim nothing more; jobs already running go on (the caller drains ``tasks``)."""
        self._stopping = True
        self.queue.new_work.set()
        self._slot_freed.set()

    async def run(self) -> None:
        """Claim and run jobs until ``stop()``."""
        maintenance = asyncio.create_task(self._maintain())
        try:
            while not self._stopping:
                if self._running >= self._settings.job_concurrency:
                    self._slot_freed.clear()
                    await self._slot_freed.wait()
                    continue
                job = await self._claim()
                if job is None:
                    await self._idle()
                    continue
                self._running += 1
                task = asyncio.create_task(self._execute(job))
                self.tasks.adopt(task)
                task.add_done_callback(self._free_slot)
        finally:
            maintenance.cancel()
            await asyncio.gather(maintenance, return_exceptions=True)

    def _free_slot(self, _: asyncio.Task[None]) -> None:
        self._running -= 1
        self._slot_freed.set()

    async def _claim(self) -> Job | None:
        try:
            return await self.queue.claim()
        except _DB_DOWN as exc:
            logger.warning("job claim failed: %s", type(exc).__name__)
            return None

    async def _idle(self) -> None:
        if self._stopping:
            return
        try:
            await asyncio.wait_for(self.queue.new_work.wait(), self._settings.job_poll_s)
        except TimeoutError:
            pass
        self.queue.new_work.clear()

    async def _execute(self, job: Job) -> None:
        handler = self.handlers.get(job.kind)
        if handler is None:
            logger.error("job %s has kind %r, which no handler serves", job.job_id, job.kind)
            await self.queue.finish(job, dead=True, outcome="unknown_kind")
            return
        if job.rerun:
            self.metrics.reruns.inc()
        running = asyncio.current_task()
        assert running is not None  # _execute always runs as a task
        heartbeat = asyncio.create_task(self._heartbeat(job, running))
        try:
            outcome = await self._attempt(job, handler)
        except asyncio.CancelledError:
            # The drain ran out of time (or the lease was lost): hand it back now; another
            # replica (or this one after its restart) runs it again and finds what was posted.
            await asyncio.shield(self._release(job))
            raise
        finally:
            heartbeat.cancel()
        self.metrics.runs.labels(job.kind, outcome).inc()

    async def _attempt(self, job: Job, handler: JobHandler) -> str:
        if job.overdue or job.exhausted:
            return await self._give_up(job, handler)
        remaining = self._settings.job_deadline_s - job.age_s
        try:
            async with asyncio.timeout(max(remaining, 0.1)) as deadline:
                await handler.run(job)
        except TimeoutError:
            if deadline.expired():
                return await self._give_up(job, handler)
            return await self._retry(job, handler, "TimeoutError")
        # Any failure of a handler is retried (then ends in the give-up card); the worker,
        # like Bolt's error handler for listeners, is the one place that must survive them.
        except Exception as exc:
            if not isinstance(exc, _DB_DOWN):
                logger.error("job %s (%s) failed", job.job_id, job.kind, exc_info=exc)
            return await self._retry(job, handler, type(exc).__name__)
        await self.queue.finish(job, outcome="done")
        return "done"

    async def _retry(self, job: Job, handler: JobHandler, why: str) -> str:
        if job.attempts >= job.max_attempts:
            return await self._give_up(job, handler)
        delay = min(0.5 * 2 ** (job.attempts - 1), _MAX_BACKOFF_S)
        logger.warning("job %s failed (%s); retrying in %.1f s", job.job_id, why, delay)
        await self.queue.requeue(job, delay_s=delay)
        return "retry"

    async def _give_up(self, job: Job, handler: JobHandler) -> str:
        try:
            await handler.give_up(job)
        except Exception as exc:  # as in _attempt: try again, within bounds
            if job.attempts < 2 * job.max_attempts:
                logger.warning("job %s: give-up card failed (%s)", job.job_id, type(exc).__name__)
                await self.queue.requeue(job, delay_s=_MAX_BACKOFF_S / 10)
                return "retry"
            logger.error("job %s ended without its give-up card", job.job_id, exc_info=exc)
        await self.queue.finish(job, dead=True, outcome="overdue" if job.overdue else "attempts")
        return "dead"

    async def _release(self, job: Job) -> None:
        try:
            await self.queue.requeue(job, delay_s=0, refund=True)
        except _DB_DOWN as exc:  # its lease runs out instead; the job is not lost either way
            logger.warning("job %s not released: %s", job.job_id, type(exc).__name__)
        self.metrics.runs.labels(job.kind, "released").inc()

    async def _heartbeat(self, job: Job, running: asyncio.Task[None]) -> None:
        every = self._settings.job_lease_s / 3
        while True:
            await asyncio.sleep(every)
            try:
                if not await self.queue.heartbeat(job):
                    # Another worker claimed it (this one stalled past its lease): stop before
                    # posting, so two runs never race to the same thread.
                    logger.warning("job %s: lease lost to another worker; stopping", job.job_id)
                    running.cancel()
                    return
            except _DB_DOWN as exc:
                logger.info("job %s: heartbeat failed (%s)", job.job_id, type(exc).__name__)

    async def _maintain(self) -> None:
        pruned_at = 0.0
        while True:
            await asyncio.sleep(_MAINTENANCE_EVERY_S)
            try:
                if self.queue.held:
                    await self.queue.retry_held()
                    self.queue.new_work.set()
                if time.monotonic() - pruned_at > _PRUNE_EVERY_S:
                    pruned_at = time.monotonic()
                    if pruned := await self.queue.prune():
                        logger.info("pruned %d finished jobs", pruned)
                self.metrics.observe(await self.queue.stats(), held=self.queue.held)
            except _DB_DOWN as exc:
                logger.info("queue maintenance skipped: %s", type(exc).__name__)
