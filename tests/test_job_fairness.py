"""Who gets a worker next (issue 27): only kinds the replica serves, tenants in turn, and no
tenant above its share of a replica's slots. Real queue on the session's Postgres."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest_asyncio
from prometheus_client import CollectorRegistry

from bot.core.jobs.metrics import JobMetrics
from bot.core.jobs.queue import Job, JobQueue, JobRequest, JobTenant
from bot.core.jobs.worker import JobHandlers, JobWorker
from bot.core.tasks import BackgroundTasks
from bot.server import working
from rag import Settings, Store
from tests.slack_harness import forget_unfinished_jobs

KIND = "test.fair"


class Timed:
    """A handler that takes ``seconds`` per job and records who ran when, and how many of
    each tenant's jobs ran at once."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.order: list[str] = []
        self.running: dict[str, int] = {}
        self.most_at_once: dict[str, int] = {}

    async def run(self, job: Job) -> None:
        tenant = job.tenant_key
        self.order.append(tenant)
        self.running[tenant] = self.running.get(tenant, 0) + 1
        self.most_at_once[tenant] = max(self.most_at_once.get(tenant, 0), self.running[tenant])
        try:
            await asyncio.sleep(self.seconds)
        finally:
            self.running[tenant] -= 1

    async def give_up(self, job: Job) -> None:
        raise AssertionError(f"job {job.job_id} gave up")


@pytest_asyncio.fixture(loop_scope="session")
async def clean(store: Store) -> AsyncIterator[None]:
    await forget_unfinished_jobs(store)
    yield
    await forget_unfinished_jobs(store)


@asynccontextmanager
async def replica(
    store: Store, settings: Settings, handlers: dict[str, Timed]
) -> AsyncIterator[JobQueue]:
    queue = await JobQueue.open(store, settings)
    registered, tasks = JobHandlers(), BackgroundTasks()
    for kind, handler in handlers.items():
        registered.register(kind, handler)
    worker = JobWorker(queue, registered, tasks=tasks, metrics=JobMetrics(CollectorRegistry()))
    try:
        async with working(worker, tasks, drain_s=10):
            yield queue
    finally:
        await queue.close()


async def enqueue(queue: JobQueue, tenant: str | None, kind: str = KIND, n: int = 1) -> None:
    async with queue.intake() as conn:
        for _ in range(n):
            request = JobRequest(kind, f"test:{uuid.uuid4()}", {}, JobTenant(tenant_id=tenant))
            assert await queue.insert(conn, request)
    queue.new_work.set()


async def states(store: Store, kind: str) -> list[tuple[str, int, str | None]]:
    async with store.pool.connection() as conn:
        cur = await conn.execute(
            "SELECT state, attempts, outcome FROM jobs WHERE kind = %s", (kind,)
        )
        return [(row[0], row[1], row[2]) for row in await cur.fetchall()]


async def test_tenants_take_turns_so_a_backlog_of_one_does_not_hold_up_another(
    store: Store, settings: Settings, clean: None
) -> None:
    handler = Timed(0.02)
    one_slot = settings.model_copy(update={"job_concurrency": 1, "job_poll_s": 0.05})
    async with replica(store, one_slot, {}) as idle:  # queues, claims nothing
        await enqueue(idle, "storm", n=40)
        await enqueue(idle, "quiet")
    async with replica(store, one_slot, {KIND: handler}):
        deadline = time.monotonic() + 30
        while len(handler.order) < 41:
            assert time.monotonic() < deadline, handler.order
            await asyncio.sleep(0.05)
    # The quiet tenant's one job went within the first two turns, not after the storm's 40.
    assert handler.order.index("quiet") <= 1


async def test_one_tenant_holds_at_most_its_share_of_a_replicas_slots(
    store: Store, settings: Settings, clean: None
) -> None:
    handler = Timed(0.3)
    capped = settings.model_copy(
        update={"job_concurrency": 4, "job_tenant_concurrency": 2, "job_poll_s": 0.05}
    )
    async with replica(store, capped, {KIND: handler}) as queue:
        await enqueue(queue, "storm", n=8)
        await enqueue(queue, "quiet", n=2)
        deadline = time.monotonic() + 30
        while len(handler.order) < 10 or any(handler.running.values()):
            assert time.monotonic() < deadline, handler.order
            await asyncio.sleep(0.05)
    assert handler.most_at_once == {"storm": 2, "quiet": 2}
    assert "quiet" in handler.order[:4]  # the two free slots went to the other tenant


async def test_a_replica_leaves_a_kind_it_does_not_serve_queued_for_one_that_does(
    store: Store, settings: Settings, clean: None
) -> None:
    """A rolling upgrade: the old replica has no handler for a kind the new one added."""
    old, new = Timed(0.0), Timed(0.0)
    quick = settings.model_copy(update={"job_poll_s": 0.05})
    async with replica(store, quick, {KIND: old}) as queue:
        await enqueue(queue, "acme", kind="test.added")
        await enqueue(queue, "acme")
        deadline = time.monotonic() + 10
        while not old.order:
            assert time.monotonic() < deadline
            await asyncio.sleep(0.05)
        await asyncio.sleep(0.5)  # several more claims
        assert await states(store, "test.added") == [("queued", 0, None)]
    async with replica(store, quick, {KIND: Timed(0.0), "test.added": new}):
        deadline = time.monotonic() + 10
        while await states(store, "test.added") != [("done", 1, "done")]:
            assert time.monotonic() < deadline
            await asyncio.sleep(0.05)
    assert new.order == ["acme"]


async def test_jobs_without_a_tenant_take_turns_as_one_more_tenant(
    store: Store, settings: Settings, clean: None
) -> None:
    handler = Timed(0.0)
    quick = settings.model_copy(update={"job_concurrency": 1, "job_poll_s": 0.05})
    async with replica(store, quick, {}) as idle:
        await enqueue(idle, None, n=3)
        await enqueue(idle, "acme", n=3)
    async with replica(store, quick, {KIND: handler}):
        deadline = time.monotonic() + 10
        while len(handler.order) < 6:
            assert time.monotonic() < deadline
            await asyncio.sleep(0.05)
    assert sorted(handler.order[:2]) == ["", "acme"]
