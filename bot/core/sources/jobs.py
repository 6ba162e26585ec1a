"""Sources kept in sync by ``runbook serve``: the ``source.sync`` job on the durable queue, queued
on a schedule and by push webhooks.

Every replica runs the schedule; a sync's dedupe key names its source and its interval slot
(or the pushed commit), so replicas queue each sync once between them. The sync itself holds
the tenant's ingest lock, so one source never syncs twice at a time across replicas. A failed
sync is recorded on the source, not retried by the queue: the next slot or push tries again.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager

from bot.core.jobs.periodic import rounds_running
from bot.core.jobs.queue import Job, JobQueue, JobRequest, JobTenant
from bot.core.sources.runs import SyncOutcome, run_sync
from bot.core.token_cipher import TokenCipher
from rag import Embedder, Settings, Store, get_source, list_sources

logger = logging.getLogger(__name__)

SYNC_KIND = "source.sync"
SCHEDULE_TICK_S = 30.0

# Told of a sync's outcome (the owners' loop hears of a source that keeps failing).
OnOutcome = Callable[[SyncOutcome], Awaitable[None]]


async def queue_sync(jobs: JobQueue, *, source_id: uuid.UUID, tenant: str, key: str) -> bool:
    """Queue a sync of the source unless one with this ``key`` was queued before."""
    request = JobRequest(
        kind=SYNC_KIND,
        dedupe_key=f"{SYNC_KIND}:{source_id}:{key}",
        payload={"source_id": str(source_id)},
        tenant=JobTenant(tenant_id=tenant),
        deadline_s=jobs.settings.source_sync_deadline_s,
    )
    async with jobs.intake() as conn:
        queued = await jobs.insert(conn, request)
    if queued:
        jobs.new_work.set()
    return queued


class SourceSyncJob:
    """The ``source.sync`` job handler."""

    def __init__(
        self,
        *,
        store: Store,
        embedder: Embedder,
        settings: Settings,
        cipher: TokenCipher | None,
        on_outcome: OnOutcome | None = None,
    ) -> None:
        self._store = store
        self._embedder = embedder
        self._settings = settings
        self._cipher = cipher
        self._on_outcome = on_outcome

    async def run(self, job: Job) -> None:
        row = await get_source(self._store, uuid.UUID(str(job.payload["source_id"])))
        if row is None:
            return  # removed since it was queued
        outcome = await run_sync(
            self._store, self._embedder, row, settings=self._settings, cipher=self._cipher
        )
        if self._on_outcome is not None:
            await self._on_outcome(outcome)

    async def give_up(self, job: Job) -> None:
        logger.warning("source sync job %s gave up (deadline or attempts)", job.job_id)


async def queue_due_syncs(store: Store, jobs: JobQueue, settings: Settings) -> int:
    """Queue this interval slot's sync of every source; returns how many were new."""
    interval_s = settings.source_sync_interval_min * 60
    slot = int(time.time() // interval_s)
    queued = 0
    for row in await list_sources(store):
        if await queue_sync(jobs, source_id=row.source_id, tenant=row.tenant_id, key=f"at-{slot}"):
            queued += 1
    return queued


def source_schedule_running(
    store: Store, jobs: JobQueue, settings: Settings
) -> AbstractAsyncContextManager[None]:
    """Queue due syncs in the background for the duration of the block."""
    return rounds_running(
        "source-schedule",
        lambda: queue_due_syncs(store, jobs, settings),
        every_s=min(SCHEDULE_TICK_S, settings.source_sync_interval_min * 60),
        queued="queued %d scheduled source syncs",
    )
