"""The ack path's claim on the CPU (``bot.cpu_priority``) and its intake connections: a process
gets the short time slice it asks for and keeps its nice value and scheduling class; the web
role's intake pool is open whole, its Postgres backends (the embedded server's, on this machine)
share that slice, and each connection's rehearsed claim leaves no row and wakes no worker. A
niced process's store backends share its nice value (``rag.store.backend_priority``)."""

from __future__ import annotations

import os
import platform
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.core.jobs.queue import JobQueue
from bot.cpu_priority import prefer_short_slices
from rag import Settings, Store
from tests.test_job_wakeups import heard

# A process at nice 7 opens the store and reads its pooled connection's backend's nice value.
_NICE_STORE = """
import asyncio, os
os.nice(7)
from rag import Settings, Store

async def main() -> None:
    store = await Store.open(Settings())
    async with store.pool.connection() as conn:
        print(os.getpriority(os.PRIO_PROCESS, conn.info.backend_pid))
    await store.close()

asyncio.run(main())
"""

SLICE_US = 100


def kernel_has_custom_slices() -> bool:
    """Linux 6.12 and later take a normal task's slice from sched_setattr (EEVDF)."""
    release = platform.release().split(".")
    try:
        major, minor = int(release[0]), int(release[1])
    except (IndexError, ValueError):
        return False
    return platform.system() == "Linux" and (major, minor) >= (6, 12)


needs_custom_slices = pytest.mark.skipif(
    not kernel_has_custom_slices(), reason="the kernel has no custom time slices (Linux 6.12+)"
)


def slice_ns(pid: int) -> int:
    for line in Path(f"/proc/{pid}/sched").read_text().splitlines():
        if line.startswith("se.slice"):
            return int(line.split(":")[1])
    raise AssertionError(f"/proc/{pid}/sched shows no se.slice")


def nice_of(pid: int) -> int:
    return os.getpriority(os.PRIO_PROCESS, pid)


@pytest.fixture
def sleeper() -> Iterator[subprocess.Popen[bytes]]:
    process = subprocess.Popen(["sleep", "60"], preexec_fn=lambda: os.nice(3))
    try:
        yield process
    finally:
        process.kill()
        process.wait()


@needs_custom_slices
def test_a_process_gets_the_short_slice_it_asks_for_and_keeps_its_nice_value(
    sleeper: subprocess.Popen[bytes],
) -> None:
    assert slice_ns(sleeper.pid) != SLICE_US * 1000
    assert prefer_short_slices(SLICE_US, sleeper.pid)
    assert slice_ns(sleeper.pid) == SLICE_US * 1000
    assert nice_of(sleeper.pid) == 3


@needs_custom_slices
def test_a_batch_process_keeps_its_class_and_an_idle_one_is_left_alone(
    sleeper: subprocess.Popen[bytes],
) -> None:
    os.sched_setscheduler(sleeper.pid, os.SCHED_BATCH, os.sched_param(0))
    assert prefer_short_slices(SLICE_US, sleeper.pid)
    assert os.sched_getscheduler(sleeper.pid) == os.SCHED_BATCH
    assert slice_ns(sleeper.pid) == SLICE_US * 1000
    os.sched_setscheduler(sleeper.pid, os.SCHED_IDLE, os.sched_param(0))
    assert not prefer_short_slices(SLICE_US, sleeper.pid)
    assert os.sched_getscheduler(sleeper.pid) == os.SCHED_IDLE


@needs_custom_slices
def test_no_slice_is_asked_for_when_switched_off_or_for_a_process_that_is_gone(
    sleeper: subprocess.Popen[bytes],
) -> None:
    before = slice_ns(sleeper.pid)
    assert not prefer_short_slices(0, sleeper.pid)  # RUNBOOK_WEB_SLICE_US=0
    assert slice_ns(sleeper.pid) == before
    sleeper.kill()
    sleeper.wait()
    assert not prefer_short_slices(SLICE_US, sleeper.pid)


@needs_custom_slices
async def test_the_web_roles_intake_pool_is_open_whole_on_backends_with_the_short_slice(
    store: Store, settings: Settings
) -> None:
    queue = await JobQueue.open(store, settings, acks=True)
    try:
        assert queue.intake_pool.get_stats()["pool_size"] == settings.intake_pool_size
        async with queue.intake() as conn:
            backend = conn.info.backend_pid
        assert slice_ns(backend) == settings.web_slice_us * 1000
    finally:
        await queue.close()


@needs_custom_slices
async def test_a_workers_intake_pool_grows_on_demand_and_leaves_its_backends_alone(
    store: Store, settings: Settings
) -> None:
    queue = await JobQueue.open(store, settings)
    try:
        assert queue.intake_pool.get_stats()["pool_size"] == 1
        async with queue.intake() as conn:
            backend = conn.info.backend_pid
        assert slice_ns(backend) != settings.web_slice_us * 1000
    finally:
        await queue.close()


async def test_each_intake_connections_rehearsed_claim_leaves_no_row_and_wakes_no_worker(
    store: Store, settings: Settings
) -> None:
    async with await store.connect_outside_pool() as listener:
        await listener.execute("LISTEN runbook_jobs")
        queue = await JobQueue.open(store, settings, acks=True)
        try:
            assert await heard(listener, 0.5) == []
        finally:
            await queue.close()
    async with store.pool.connection() as conn:
        jobs = await (
            await conn.execute("SELECT count(*) FROM jobs WHERE kind = 'rehearsal'")
        ).fetchone()
        seen = await (
            await conn.execute("SELECT count(*) FROM events_seen WHERE event_id LIKE 'rehearsal-%'")
        ).fetchone()
    assert jobs == (0,)
    assert seen == (0,)


def test_a_niced_process_gives_its_store_backends_its_nice_value(
    settings: Settings, database_url: str
) -> None:
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("RUNBOOK_")},
        "DATABASE_URL": database_url,
        "RUNBOOK_DATA_DIR": str(settings.data_dir),
    }
    done = subprocess.run(
        [sys.executable, "-c", _NICE_STORE], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["7"]


async def test_a_process_at_normal_priority_leaves_its_store_backends_alone(store: Store) -> None:
    if nice_of(0) != 0:
        pytest.skip("the test runner itself runs below normal priority")
    async with store.pool.connection() as conn:
        assert nice_of(conn.info.backend_pid) == 0
