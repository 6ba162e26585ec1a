"""The durable queue on a real Postgres: leases, heartbeats, deadlines, attempts, pruning, drain,
and the intake claim that fails closed. Each "replica" is its own ``JobQueue`` and worker."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack, asynccontextmanager

import psycopg
import pytest
import pytest_asyncio
from prometheus_client import CollectorRegistry

from bot.core.dedupe import EventDeduper
from bot.core.jobs.metrics import JobMetrics
from bot.core.jobs.queue import Job, JobQueue, JobRequest
from bot.core.jobs.worker import JobHandlers, JobWorker
from bot.core.statements import Statement
from bot.core.tasks import BackgroundTasks
from bot.server import working
from rag import Settings, Store
from tests.slack_harness import forget_unfinished_jobs

KIND = "test.echo"


class Recorder:
    """A job handler that records what it was asked to do, and can be slow or failing."""

    def __init__(self, *, seconds: float = 0.0, failures: int = 0) -> None:
        self.seconds = seconds
        self.failures = failures
        self.runs: list[Job] = []
        self.give_ups: list[Job] = []

    async def run(self, job: Job) -> None:
        self.runs.append(job)
        if self.failures:
            self.failures -= 1
            raise RuntimeError("handler failed on purpose")
        await asyncio.sleep(self.seconds)

    async def give_up(self, job: Job) -> None:
        self.give_ups.append(job)


@pytest_asyncio.fixture(loop_scope="session")
async def clean(store: Store) -> AsyncIterator[None]:
    await forget_unfinished_jobs(store)
    yield
    await forget_unfinished_jobs(store)


def tuned(settings: Settings, **overrides: float) -> Settings:
    defaults = {"job_lease_s": 1.0, "job_poll_s": 0.05}
    return settings.model_copy(update={**defaults, **overrides})


@asynccontextmanager
async def replica(
    store: Store, settings: Settings, handler: Recorder | None = None, *, drain_s: float = 10
) -> AsyncIterator[tuple[JobQueue, BackgroundTasks]]:
    """A queue, and (with a handler) its worker running until the block ends."""
    queue = await JobQueue.open(store, settings)
    tasks = BackgroundTasks()
    try:
        if handler is None:
            yield queue, tasks
            return
        handlers = JobHandlers()
        handlers.register(KIND, handler)
        metrics = JobMetrics(CollectorRegistry())
        worker = JobWorker(queue, handlers, tasks=tasks, metrics=metrics)
        async with working(worker, tasks, drain_s=drain_s):
            yield queue, tasks
    finally:
        await queue.close()


async def enqueue(queue: JobQueue, key: str | None = None) -> str:
    key = key or f"test:{uuid.uuid4()}"
    async with queue.intake() as conn:
        assert await queue.insert(conn, JobRequest(KIND, key, {"n": 1}))
    queue.new_work.set()
    return key


async def job_row(store: Store, key: str) -> tuple[str, int, str | None]:
    async with store.pool.connection() as conn:
        cur = await conn.execute(
            "SELECT state, attempts, outcome FROM jobs WHERE dedupe_key = %s", (key,)
        )
        row = await cur.fetchone()
    assert row is not None, f"no job {key}"
    return row[0], row[1], row[2]


def started(handler: Recorder) -> Callable[[], Awaitable[bool]]:
    async def check() -> bool:
        return bool(handler.runs)

    return check


async def eventually(check: Callable[[], Awaitable[bool]], within_s: float = 10.0) -> None:
    deadline = time.monotonic() + within_s
    while not await check():
        assert time.monotonic() < deadline, "condition not met in time"
        await asyncio.sleep(0.05)


async def test_a_job_whose_worker_died_is_claimed_again_after_its_lease(
    store: Store, settings: Settings, clean: None
) -> None:
    async with (
        replica(store, tuned(settings)) as (dead, _),
        replica(store, tuned(settings)) as (alive, _),
    ):
        await enqueue(dead)
        first = await dead.claim([KIND])  # ... and never heartbeats: its process was SIGKILLed
        assert first is not None and not first.rerun
        assert await alive.claim([KIND]) is None  # leased: nobody else may take it yet
        await asyncio.sleep(1.1)
        again = await alive.claim([KIND])
        assert again is not None and again.job_id == first.job_id
        assert again.rerun and again.attempts == 2
        assert not await dead.heartbeat(first)  # the old lease is gone for good
        await alive.finish(again)


async def test_heartbeats_keep_a_slow_job_with_its_worker_while_other_replicas_poll(
    store: Store, settings: Settings, clean: None
) -> None:
    slow, other = Recorder(seconds=2.5), Recorder()
    async with replica(store, tuned(settings), slow) as (queue, _):
        key = await enqueue(queue)
        await eventually(started(slow))
        async with replica(store, tuned(settings), other):
            await eventually(lambda: job_done(store, key), within_s=10)
    assert len(slow.runs) == 1 and other.runs == []  # 2.5 s is 2.5 leases: heartbeats held it


async def job_done(store: Store, key: str) -> bool:
    return await job_is(store, key, "done")


async def test_a_job_past_its_deadline_ends_in_give_up_and_is_never_run(
    store: Store, settings: Settings, clean: None
) -> None:
    handler = Recorder()
    quick = tuned(settings, job_deadline_s=0.2)
    async with replica(store, quick) as (queue, _):
        key = await enqueue(queue)  # nobody is running a worker: the job waits
        await asyncio.sleep(0.3)
    async with replica(store, quick, handler):
        await eventually(lambda: job_is(store, key, "dead"))
    assert handler.runs == [] and len(handler.give_ups) == 1
    assert await job_row(store, key) == ("dead", 1, "overdue")


async def job_is(store: Store, key: str, state: str) -> bool:
    return await count_jobs(store, key) == 1 and (await job_row(store, key))[0] == state


async def test_a_job_that_fails_every_attempt_ends_in_give_up(
    store: Store, settings: Settings, clean: None
) -> None:
    handler = Recorder(failures=10)
    async with replica(store, tuned(settings, job_max_attempts=2), handler) as (queue, _):
        key = await enqueue(queue)
        await eventually(lambda: job_is(store, key, "dead"))
    assert len(handler.runs) == 2 and len(handler.give_ups) == 1
    assert await job_row(store, key) == ("dead", 2, "attempts")


async def test_a_job_that_fails_once_is_retried_and_finishes(
    store: Store, settings: Settings, clean: None
) -> None:
    handler = Recorder(failures=1)
    async with replica(store, tuned(settings), handler) as (queue, _):
        key = await enqueue(queue)
        await eventually(lambda: job_done(store, key))
    assert [job.attempts for job in handler.runs] == [1, 2] and handler.give_ups == []


async def test_finished_jobs_are_pruned_after_the_retention_window_and_unfinished_never(
    store: Store, settings: Settings, clean: None
) -> None:
    async with replica(store, tuned(settings, job_retention_h=1.0)) as (queue, _):
        old, waiting = await enqueue(queue), await enqueue(queue)
        claimed = await queue.claim([KIND])  # the oldest first
        assert claimed is not None
        await queue.finish(claimed)
        async with store.pool.connection() as conn:
            cur = await conn.execute(
                "SELECT payload FROM jobs WHERE job_id = %s", (claimed.job_id,)
            )
            assert await cur.fetchone() == ({},)  # a finished job keeps no question text
            assert await queue.prune() == 0  # finished just now: inside the window
            await conn.execute(
                "UPDATE jobs SET finished_at = now() - interval '2 hours' WHERE job_id = %s",
                (claimed.job_id,),
            )
            assert await queue.prune() == 1
            cur = await conn.execute(
                "SELECT dedupe_key FROM jobs WHERE dedupe_key = ANY(%s)", ([old, waiting],)
            )
            assert await cur.fetchall() == [(waiting,)]


async def test_stats_count_queued_running_dead_and_the_oldest_age(
    store: Store, settings: Settings, clean: None
) -> None:
    async with replica(store, tuned(settings)) as (queue, _):
        await enqueue(queue)
        await enqueue(queue)
        await asyncio.sleep(0.2)
        running = await queue.claim([KIND])
        assert running is not None
        stats = await queue.stats()
        assert (stats.queued, stats.running) == (1, 1)
        assert stats.oldest_age_s >= 0.2
        await queue.finish(running, dead=True, outcome="overdue")
        assert (await queue.stats()).dead >= 1


async def test_drain_hands_an_unfinished_job_back_at_once_without_spending_an_attempt(
    store: Store, settings: Settings, clean: None
) -> None:
    stuck = Recorder(seconds=60)
    async with replica(store, tuned(settings, job_lease_s=30.0), stuck, drain_s=0.3) as (
        queue,
        _,
    ):
        key = await enqueue(queue)
        await eventually(started(stuck))
    # The drain cancelled it and put it back: no 30 s lease to wait out.
    assert await job_row(store, key) == ("queued", 0, None)
    async with replica(store, tuned(settings)) as (other, _):
        again = await other.claim([KIND])
        assert again is not None and again.attempts == 1
        await other.finish(again)


async def test_an_intake_claim_the_database_cannot_take_is_acked_held_and_queued_once(
    store: Store, settings: Settings, clean: None
) -> None:
    """Fail closed: a claim that times out is neither let through nor lost."""
    narrow = tuned(settings, intake_pool_size=1, intake_timeout_s=0.3)
    async with AsyncExitStack() as stack:
        queue_a, _ = await stack.enter_async_context(replica(store, narrow))
        queue_b, _ = await stack.enter_async_context(replica(store, narrow))
        here, there = EventDeduper(store, queue=queue_a), EventDeduper(store, queue=queue_b)
        key = f"Ev{uuid.uuid4().hex[:10]}"
        job = JobRequest(KIND, key, {"n": 1})
        async with queue_a.intake_pool.connection():  # answer work (or a stall) holds it
            started = time.monotonic()
            assert not await here.first_delivery(key, job)
            assert time.monotonic() - started < 1.0  # well inside Slack's 3 s
        assert queue_a.held == 1
        assert not await count_jobs(store, key)  # not let through: nothing queued yet
        # Slack's retry of the same event reaches the other replica, which claims it.
        assert await there.first_delivery(key, job)
        await queue_a.retry_held()  # the database answers again: the held claim is a no-op
        assert queue_a.held == 0
        assert await count_jobs(store, key) == 1


async def test_a_held_claim_is_queued_once_the_database_answers_again(
    store: Store, settings: Settings, clean: None
) -> None:
    narrow = tuned(settings, intake_pool_size=1, intake_timeout_s=0.3)
    handler = Recorder()
    async with replica(store, narrow, handler) as (queue, _):
        deduper = EventDeduper(store, queue=queue)
        key = f"Ev{uuid.uuid4().hex[:10]}"
        async with queue.intake_pool.connection():
            assert not await deduper.first_delivery(key, JobRequest(KIND, key, {"n": 1}))
        # The worker's maintenance tick retries the held claim; then the job runs, once.
        await eventually(lambda: job_done(store, key))
        assert not await deduper.first_delivery(key, JobRequest(KIND, key, {"n": 1}))
    assert len(handler.runs) == 1


async def count_jobs(store: Store, key: str) -> int:
    async with store.pool.connection() as conn:
        cur = await conn.execute("SELECT count(*) FROM jobs WHERE dedupe_key = %s", (key,))
        row = await cur.fetchone()
    assert row is not None
    return int(row[0])


async def seen(store: Store, key: str) -> bool:
    async with store.pool.connection() as conn:
        cur = await conn.execute("SELECT 1 FROM events_seen WHERE event_id = %s", (key,))
        return await cur.fetchone() is not None


async def test_what_a_run_left_is_written_with_the_jobs_end_all_or_none(
    store: Store, settings: Settings, clean: None
) -> None:
    mark = "INSERT INTO events_seen (event_id) VALUES (%(key)s)"
    async with replica(store, tuned(settings)) as (queue, _):
        key = await enqueue(queue)
        job = await queue.claim([KIND])
        assert job is not None
        # A write that fails (the job's own delivery key is claimed already) keeps the job
        # running: its end is not written without what its run left.
        job.pending.append(Statement(mark, {"key": key}))
        with pytest.raises(psycopg.errors.UniqueViolation):
            await queue.finish(job)
        assert (await job_row(store, key))[0] == "running"
        job.pending.clear()
        other = f"test:{uuid.uuid4()}"
        job.pending.append(Statement(mark, {"key": other}))
        await queue.finish(job)
        assert (await job_row(store, key))[0] == "done" and await seen(store, other)
        assert job.pending == []


def test_a_kind_cannot_be_registered_twice() -> None:
    handlers = JobHandlers()
    handlers.register(KIND, Recorder())
    with pytest.raises(ValueError, match="registered twice"):
        handlers.register(KIND, Recorder())
