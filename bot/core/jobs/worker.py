"""``JobWorker``: claims jobs with a lease, keeps the lease alive while they run, and lets go.

One per ``runbook serve``. It claims only the kinds its process has handlers for (a Teams-only
replica beside a Slack one, or an old replica during a rolling upgrade, leaves other kinds
queued for a replica that serves them), tenants taking turns, and only while it has a free slot
(``job_slots``, of which one tenant holds at most ``job_tenant_slots``), so a busy
replica leaves work to idle ones; the answer pipeline's own slots still bound CPU work.

A job past its deadline, or out of attempts, goes to its handler's ``give_up`` (a visible
"could not answer in time" card) instead of ``run``. A database outage is not the job's fault:
a job it interrupts waits for the database (``DatabaseWatch``) and runs again the moment it
answers, within its deadline and without spending an attempt. On shutdown the worker stops
claiming; what the drain cancels is handed back to the queue at once, never dropped.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import logging
from collections import Counter
from collections.abc import Awaitable, Callable
from typing import Protocol

import psycopg

from bot.core.jobs.database_watch import unreachable
from bot.core.jobs.metrics import JobMetrics
from bot.core.jobs.queue import Job, JobQueue
from bot.core.jobs.upkeep import QueueUpkeep
from bot.core.tasks import BackgroundTasks
from rag import StoreError

logger = logging.getLogger(__name__)

_MAX_BACKOFF_S = 30.0
# The worker's own bookkeeping failing: the database (or its pool) did not answer.
_BOOKKEEPING = (psycopg.Error, StoreError, TimeoutError)


class JobHandler(Protocol):
    """What a surface registers per job kind. ``run`` may be called again for the same job
    (``job.rerun``) after a crash, so it must find what an earlier run already posted."""

    async def run(self, job: Job) -> None: ...

    async def give_up(self, job: Job) -> None: ...


class JobHandlers:
    """Job kind → handler; each surface registers its kinds (``slack.mention``, …). The kinds
    registered are exactly the kinds this process claims."""

    def __init__(self) -> None:
        self._handlers: dict[str, JobHandler] = {}

    def register(self, kind: str, handler: JobHandler) -> None:
        if kind in self._handlers:
            raise ValueError(f"job kind {kind!r} is registered twice")
        self._handlers[kind] = handler

    def __getitem__(self, kind: str) -> JobHandler:
        return self._handlers[kind]

    @property
    def kinds(self) -> frozenset[str]:
        return frozenset(self._handlers)


class _LeaseLost(Exception):
    """Another worker claimed the job while this one waited out a database outage."""


class JobWorker:
    def __init__(
        self,
        queue: JobQueue,
        handlers: JobHandlers,
        *,
        tasks: BackgroundTasks,
        metrics: JobMetrics,
        capped: tuple[str, int] | None = None,
    ) -> None:
        """``capped`` (kind, cap): a kind of which at most ``cap`` jobs run at once in the
        whole queue (source syncs: they must never take every worker)."""
        self.queue = queue
        self.handlers = handlers
        self.tasks = tasks
        self.metrics = metrics
        self.upkeep = QueueUpkeep(queue, metrics, prune=True)
        self._capped = capped if capped is not None and capped[0] in handlers.kinds else None
        self._settings = queue.settings
        self._database = queue.database
        self._running: Counter[str] = Counter()  # jobs in flight per tenant key
        self._slot_freed = asyncio.Event()
        self._stopping = asyncio.Event()

    def stop(self) -> None:
        """Claim nothing more; jobs already running go on (the caller drains ``tasks``)."""
        self._stopping.set()
        self.queue.new_work.set()
        self._slot_freed.set()

    async def run(self) -> None:
        """Claim and run jobs until ``stop()``."""
        maintenance = asyncio.create_task(self.upkeep.run())
        try:
            while not self._stopping.is_set():
                if self._running.total() >= self._settings.job_slots:
                    self._slot_freed.clear()
                    await self._slot_freed.wait()
                    continue
                job = await self._claim()
                if job is None:
                    await self._idle()
                    continue
                self._running[job.tenant_key] += 1
                task = asyncio.create_task(self._execute(job))
                self.tasks.adopt(task)
                task.add_done_callback(functools.partial(self._free_slot, job.tenant_key))
        finally:
            maintenance.cancel()
            await asyncio.gather(maintenance, return_exceptions=True)

    def _free_slot(self, tenant_key: str, _: asyncio.Task[None]) -> None:
        self._running[tenant_key] -= 1
        if self._running[tenant_key] <= 0:
            del self._running[tenant_key]
        self._slot_freed.set()
        # A tenant that was at its cap may have work waiting: claim again without a poll.
        self.queue.new_work.set()

    def _full(self) -> list[str]:
        cap = self._settings.job_tenant_slots
        return [key for key, running in self._running.items() if running >= cap]

    async def _claim(self) -> Job | None:
        try:
            return await self.queue.claim(
                self.handlers.kinds, full=self._full(), capped=self._capped
            )
        except _BOOKKEEPING as exc:
            logger.warning("job claim failed: %s", type(exc).__name__)
            if unreachable(exc) and await self._database.confirm_down():
                await self._until_up_or_stopping()
            return None

    async def _idle(self) -> None:
        if self._stopping.is_set():
            return
        try:
            await asyncio.wait_for(self.queue.new_work.wait(), self._settings.job_poll_s)
        except TimeoutError:
            pass
        self.queue.new_work.clear()

    async def _until_up_or_stopping(self) -> None:
        up = asyncio.create_task(self._database.until_up())
        stopping = asyncio.create_task(self._stopping.wait())
        await asyncio.wait({up, stopping}, return_when=asyncio.FIRST_COMPLETED)
        for waiter in (up, stopping):
            waiter.cancel()

    async def _execute(self, job: Job) -> None:
        handler = self.handlers[job.kind]  # claims name only the kinds registered here
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
        remaining = job.remaining_s
        if remaining is None:
            remaining = self._settings.job_deadline_s - job.age_s
        try:
            async with asyncio.timeout(max(remaining, 0.1)) as deadline:
                await self._run_through_outages(job, handler)
        except TimeoutError:
            if deadline.expired():
                return await self._give_up(job, handler)
            return await self._retry(job, handler, "TimeoutError")
        except _LeaseLost:
            logger.warning("job %s: claimed by another worker during the outage", job.job_id)
            return "lost"
        # Any failure of a handler is retried (then ends in the give-up card); the worker,
        # like Bolt's error handler for listeners, is the one place that must survive them.
        except Exception as exc:
            if not isinstance(exc, _BOOKKEEPING):
                logger.error("job %s (%s) failed", job.job_id, job.kind, exc_info=exc)
            return await self._retry(job, handler, type(exc).__name__)
        await self._settle(lambda: self.queue.finish(job, outcome="done"))
        return "done"

    async def _run_through_outages(self, job: Job, handler: JobHandler) -> None:
        """``handler.run``, run again each time a database outage cut it short (as a re-run:
        it looks for what the cut-off run posted)."""
        while True:
            outages = self._database.outages
            try:
                if job.resumed and not await self.queue.heartbeat(job):
                    raise _LeaseLost
                await handler.run(job)
                return
            except Exception as exc:
                if not await self._database.outage_since(outages, exc):
                    raise
            if not job.resumed:
                logger.info("job %s waits for the database", job.job_id)
                job = dataclasses.replace(job, resumed=True)
            await self._database.until_up()

    async def _settle(self, write: Callable[[], Awaitable[None]]) -> None:
        """The worker's own write of a job's fate, through an outage if one is under way."""
        while True:
            outages = self._database.outages
            try:
                await write()
                return
            except Exception as exc:
                if not await self._database.outage_since(outages, exc):
                    raise
            await self._database.until_up()

    async def _retry(self, job: Job, handler: JobHandler, why: str) -> str:
        if job.attempts >= job.max_attempts:
            return await self._give_up(job, handler)
        delay = min(0.5 * 2 ** (job.attempts - 1), _MAX_BACKOFF_S)
        logger.warning("job %s failed (%s); retrying in %.1f s", job.job_id, why, delay)
        await self._settle(lambda: self.queue.requeue(job, delay_s=delay))
        # Nobody announces a job that comes back later: wake up for it (other workers poll).
        asyncio.get_running_loop().call_later(delay, self.queue.new_work.set)
        return "retry"

    async def _give_up(self, job: Job, handler: JobHandler) -> str:
        try:
            await handler.give_up(job)
        except Exception as exc:  # as in _attempt: try again, within bounds
            if job.attempts < 2 * job.max_attempts:
                logger.warning("job %s: give-up card failed (%s)", job.job_id, type(exc).__name__)
                await self._settle(lambda: self.queue.requeue(job, delay_s=_MAX_BACKOFF_S / 10))
                return "retry"
            logger.error("job %s ended without its give-up card", job.job_id, exc_info=exc)
        outcome = "overdue" if job.overdue else "attempts"
        await self._settle(lambda: self.queue.finish(job, dead=True, outcome=outcome))
        return "dead"

    async def _release(self, job: Job) -> None:
        try:
            await self.queue.requeue(job, delay_s=0, refund=True)
        except _BOOKKEEPING as exc:  # its lease runs out instead; the job is not lost either way
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
            except _BOOKKEEPING as exc:
                logger.info("job %s: heartbeat failed (%s)", job.job_id, type(exc).__name__)
