"""``BackgroundTasks``: what a graceful shutdown waits for, and what it gives up on."""

from __future__ import annotations

import asyncio

from bot.core.tasks import BackgroundTasks


async def test_drain_waits_for_adopted_work_and_cancels_what_outlives_the_timeout() -> None:
    tasks = BackgroundTasks()
    finished: list[str] = []

    async def work(name: str, seconds: float) -> None:
        tasks.adopt_current()
        await asyncio.sleep(seconds)
        finished.append(name)

    quick = asyncio.ensure_future(work("quick", 0.05))
    stuck = asyncio.ensure_future(work("stuck", 60))
    await asyncio.sleep(0)  # let both start and adopt themselves
    assert tasks.pending == 2

    assert await tasks.drain(0.5) == 1
    assert finished == ["quick"] and quick.done() and stuck.cancelled()
    assert tasks.pending == 0
