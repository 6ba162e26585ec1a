"""``JobWakeups``: a worker hears of claimable jobs from Postgres (``LISTEN runbook_jobs``).

Migration 026 announces each job that becomes claimable now on the ``runbook_jobs`` channel;
every announcement sets the queue's ``new_work`` event, so an idle worker claims a new job
within milliseconds and otherwise sends nothing. The connection is its own (a pooled one would
drop the LISTEN when returned). When it breaks, the worker's slow poll (``RUNBOOK_JOB_POLL_S``)
carries on alone until it is back; on every (re)connection the worker looks once, since jobs
queued while nobody listened were announced to nobody.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator

import psycopg

from rag import Store, StoreError

logger = logging.getLogger(__name__)

CHANNEL = "runbook_jobs"
_RETRY_FIRST_S = 0.25
_RETRY_MAX_S = 5.0


class JobWakeups:
    def __init__(self, store: Store, new_work: asyncio.Event) -> None:
        self._store = store
        self._new_work = new_work
        self.listening = asyncio.Event()  # set while the LISTEN is in place
        self.heard = 0  # announcements received (a test, or a curious operator, reads it)

    async def run(self) -> None:
        """Listen until cancelled, reconnecting after a lost connection."""
        delay = _RETRY_FIRST_S
        while True:
            try:
                async with await self._store.connect_outside_pool() as conn:
                    await conn.execute("LISTEN runbook_jobs")  # CHANNEL
                    self.listening.set()
                    self._new_work.set()  # whatever was queued while nobody listened
                    delay = _RETRY_FIRST_S
                    async for _ in conn.notifies():
                        self.heard += 1
                        self._new_work.set()
            except (psycopg.OperationalError, StoreError, OSError) as exc:
                if self.listening.is_set():
                    logger.warning("job wake-ups lost (%s); polling until back", type(exc).__name__)
                self.listening.clear()
            await asyncio.sleep(delay)
            delay = min(delay * 2, _RETRY_MAX_S)


@contextlib.asynccontextmanager
async def wakeups_running(wakeups: JobWakeups) -> AsyncIterator[JobWakeups]:
    """Listen for the duration of the block."""
    task = asyncio.create_task(wakeups.run(), name="job-wakeups")
    try:
        yield wakeups
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
