"""A round of work repeated in the background while a block runs (``runbook serve``'s
schedules): a failed round is logged and the next one comes at its time."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable

import psycopg

logger = logging.getLogger(__name__)

STOP_TIMEOUT_S = 5.0


@contextlib.asynccontextmanager
async def rounds_running(
    name: str, one_round: Callable[[], Awaitable[int]], *, every_s: float, queued: str
) -> AsyncIterator[None]:
    """Run ``one_round`` every ``every_s`` seconds until the block ends; a round returns how
    many jobs it queued, logged as ``queued`` (a %d format)."""
    stop = asyncio.Event()

    async def repeat() -> None:
        while not stop.is_set():
            try:
                if count := await one_round():
                    logger.info(queued, count)
            except (psycopg.Error, TimeoutError) as exc:
                # The database may be away for a while; the next round tries again.
                logger.warning("%s round failed (%s)", name, type(exc).__name__)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), every_s)

    task = asyncio.create_task(repeat(), name=name)
    try:
        yield
    finally:
        stop.set()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(task, STOP_TIMEOUT_S)
