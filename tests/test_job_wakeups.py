"""Wake-ups and caps of the queue on a real Postgres: a queued job is announced (migration 026)
and wakes a listening worker, a job put back for later is not announced, a worker whose
connection breaks listens again, a dead worker's jobs go back in line at once, and a capped
kind (source syncs) never runs more than its cap at a time across claimers."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator

import psycopg
import pytest_asyncio
from psycopg.rows import TupleRow

from bot.core.jobs.queue import JobQueue, JobRequest, release_jobs_of
from bot.core.jobs.wakeups import JobWakeups, wakeups_running
from rag import Settings, Store
from tests.slack_harness import forget_unfinished_jobs
from tests.test_jobs import KIND, enqueue, job_row, tuned

SYNC = "test.sync"


@pytest_asyncio.fixture(loop_scope="session")
async def clean(store: Store) -> AsyncIterator[None]:
    await forget_unfinished_jobs(store)
    yield
    await forget_unfinished_jobs(store)


async def heard(conn: psycopg.AsyncConnection[TupleRow], within_s: float) -> list[str]:
    payloads: list[str] = []
    try:
        async with asyncio.timeout(within_s):
            async for notify in conn.notifies():
                payloads.append(notify.payload)
    except TimeoutError:
        pass
    return payloads


async def test_a_queued_job_is_announced_and_one_put_back_for_later_is_not(
    store: Store, settings: Settings, clean: None
) -> None:
    queue = await JobQueue.open(store, tuned(settings))
    try:
        async with await store.connect_outside_pool() as listener:
            await listener.execute("LISTEN runbook_jobs")
            await enqueue(queue)
            assert await heard(listener, 1.0) == [KIND]
            job = await queue.claim([KIND])
            assert job is not None
            await queue.requeue(job, delay_s=30)  # a retry's backoff: not claimable now
            assert await heard(listener, 0.5) == []
            await queue.requeue(job, delay_s=0, refund=True)  # handed back by a drain
    finally:
        await queue.close()


async def test_wakeups_set_new_work_within_milliseconds_and_survive_a_broken_connection(
    store: Store, settings: Settings, clean: None
) -> None:
    queue = await JobQueue.open(store, tuned(settings))
    wakeups = JobWakeups(store, queue.new_work)
    try:
        async with wakeups_running(wakeups):
            await asyncio.wait_for(wakeups.listening.wait(), 10)
            queue.new_work.clear()
            other = await JobQueue.open(store, tuned(settings))  # another replica's intake
            try:
                started = asyncio.get_running_loop().time()
                await enqueue(other)
                await asyncio.wait_for(queue.new_work.wait(), 2)
                took = asyncio.get_running_loop().time() - started
                # The listening connection dies (a database restart, a proxy's idle cut).
                async with store.pool.connection() as conn:
                    await conn.execute(
                        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                        "WHERE query = 'LISTEN runbook_jobs'"
                    )
                await asyncio.sleep(0.2)
                await asyncio.wait_for(wakeups.listening.wait(), 10)
                queue.new_work.clear()
                await enqueue(other)
                await asyncio.wait_for(queue.new_work.wait(), 2)
            finally:
                await other.close()
    finally:
        await queue.close()
    assert took < 0.5
    assert wakeups.heard >= 2


async def test_a_dead_workers_jobs_are_claimable_at_once_not_when_the_lease_ends(
    store: Store, settings: Settings, clean: None
) -> None:
    queue = await JobQueue.open(store, tuned(settings, job_lease_s=600))
    queue.worker_name = f"host-1-w{uuid.uuid4().hex[:6]}"
    try:
        key = await enqueue(queue)
        assert await queue.claim([KIND]) is not None  # then the process holding it dies
        assert await queue.claim([KIND]) is None  # leased for ten minutes
        assert await release_jobs_of(store, queue.worker_name) == 1
        again = await queue.claim([KIND])
        assert again is not None and again.attempts == 2  # the crash counts as an attempt
        assert (await job_row(store, key))[0] == "running"
    finally:
        await queue.close()


async def test_a_capped_kind_runs_at_most_its_cap_at_once_while_other_kinds_go_on(
    store: Store, settings: Settings, clean: None
) -> None:
    queue = await JobQueue.open(store, tuned(settings, job_lease_s=600))
    try:
        async with queue.intake() as conn:
            for _ in range(2):
                request = JobRequest(SYNC, f"test:{uuid.uuid4()}", {"n": 1})
                assert await queue.insert(conn, request)
        await enqueue(queue)
        kinds, cap = [SYNC, KIND], (SYNC, 1)
        first = await queue.claim(kinds, capped=cap)
        second = await queue.claim(kinds, capped=cap)
        third = await queue.claim(kinds, capped=cap)
        assert first is not None and first.kind == SYNC
        assert second is not None and second.kind == KIND  # the other sync waits its turn
        assert third is None
        await queue.finish(first)
        fourth = await queue.claim(kinds, capped=cap)
        assert fourth is not None and fourth.kind == SYNC
    finally:
        await queue.close()
