"""The queue's own chores in a serving process: write held intake claims once the database
takes them, prune finished jobs, and refresh the queue's gauges when ``/metrics`` is scraped.

The web role holds claims (its intake is where a delivery meets an outage) and reports the
queue's depth, which a HorizontalPodAutoscaler scales workers on; workers prune. Nothing here
runs on an idle replica but a timer: the gauges are read from the database only when scraped.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator

import psycopg

from bot.core.jobs.metrics import JobMetrics
from bot.core.jobs.queue import JobQueue
from rag import StoreError

logger = logging.getLogger(__name__)

ROUND_S = 2.0
PRUNE_EVERY_S = 300.0
GAUGES_TTL_S = 1.0
_BOOKKEEPING = (psycopg.Error, StoreError, TimeoutError)


class QueueUpkeep:
    def __init__(self, queue: JobQueue, metrics: JobMetrics, *, prune: bool) -> None:
        self.queue = queue
        self.metrics = metrics
        self._prune = prune
        self._recovered = asyncio.Event()
        queue.database.on_recovery(self._recovered.set)
        self._refreshed_at = -float("inf")
        self._refreshing = asyncio.Lock()

    async def run(self) -> None:
        """Every ``ROUND_S``, and at once when the database answers again (held claims are
        written then, not up to a round later), until cancelled."""
        pruned_at = -PRUNE_EVERY_S  # the first round prunes
        while True:
            try:
                await asyncio.wait_for(self._recovered.wait(), ROUND_S)
            except TimeoutError:
                pass
            self._recovered.clear()
            try:
                if self.queue.held:
                    await self.queue.retry_held()
                    self.queue.new_work.set()
                    self.metrics.held.set(self.queue.held)
                if self._prune and time.monotonic() - pruned_at > PRUNE_EVERY_S:
                    pruned_at = time.monotonic()
                    if pruned := await self.queue.prune():
                        logger.info("pruned %d finished jobs", pruned)
            except _BOOKKEEPING as exc:
                logger.info("queue upkeep skipped: %s", type(exc).__name__)

    async def refresh_gauges(self) -> None:
        """The queue's depth, oldest age and dead jobs from the database, at most once per
        ``GAUGES_TTL_S`` however many scrapers ask; the last values stay during an outage."""
        async with self._refreshing:
            if time.monotonic() - self._refreshed_at < GAUGES_TTL_S or self.queue.database.down:
                return
            try:
                stats = await self.queue.stats()
            except _BOOKKEEPING as exc:
                logger.info("queue gauges not refreshed: %s", type(exc).__name__)
                return
            finally:
                self._refreshed_at = time.monotonic()
            self.metrics.observe(stats, held=self.queue.held)


@contextlib.asynccontextmanager
async def queue_upkeep_running(upkeep: QueueUpkeep) -> AsyncIterator[QueueUpkeep]:
    task = asyncio.create_task(upkeep.run(), name="queue-upkeep")
    try:
        yield upkeep
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
