"""Periodic work inside ``runbook serve``: flush owner notes, purge expired text, delete
uninstalled tenants whose retention window has passed.

Every replica runs it; the flush's row locks and the purge's idempotence make that safe. A
failed round is logged and retried on the next one; it never takes the server down.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Mapping

import aiohttp
import psycopg

from bot.core.admin.lifecycle import delete_due_tenants
from bot.core.owners.queue import OwnerMessenger, flush_owner_notes
from bot.core.owners.runbook_owners import Surface
from bot.core.retention import purge_expired_text
from rag import Settings, Store

logger = logging.getLogger(__name__)

PURGE_EVERY_S = 3600.0
STOP_TIMEOUT_S = 10.0


@contextlib.asynccontextmanager
async def upkeep_running(
    store: Store, messengers: Mapping[Surface, OwnerMessenger], settings: Settings
) -> AsyncIterator[asyncio.Task[None]]:
    """Run ``run_upkeep`` in the background for the duration of the block.

    On exit the round in progress may finish (a flush cut off between its Slack post and its
    commit would send that batch again), up to ``STOP_TIMEOUT_S``.
    """
    stop = asyncio.Event()
    task = asyncio.create_task(run_upkeep(store, messengers, settings, stop), name="upkeep")
    try:
        yield task
    finally:
        stop.set()
        try:
            await asyncio.wait_for(task, STOP_TIMEOUT_S)
        except TimeoutError:
            logger.warning("upkeep round still running at shutdown; cancelled")


async def run_upkeep(
    store: Store,
    messengers: Mapping[Surface, OwnerMessenger],
    settings: Settings,
    stop: asyncio.Event,
) -> None:
    next_purge = time.monotonic()
    while not stop.is_set():
        try:
            if time.monotonic() >= next_purge:
                await purge_expired_text(store, retain_days=settings.retain_text_days)
                if deleted := await delete_due_tenants(store):
                    logger.info("deleted %d uninstalled tenants past retention", len(deleted))
                next_purge = time.monotonic() + PURGE_EVERY_S
            # A surface this process does not serve leaves its notes to a replica that does.
            if messengers:
                await _flush_owner_notes(store, messengers, settings)
        except (psycopg.Error, aiohttp.ClientError, TimeoutError) as exc:
            logger.warning("upkeep round failed (%s); retrying next round", type(exc).__name__)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), settings.owner_flush_interval_s)


async def _flush_owner_notes(
    store: Store, messengers: Mapping[Surface, OwnerMessenger], settings: Settings
) -> None:
    flushed = await flush_owner_notes(store, messengers, batch_minutes=settings.owner_batch_minutes)
    if flushed.sent or flushed.unrouted or flushed.failed or flushed.deferred:
        logger.info(
            "owner notes: %d sent, %d stored only, %d failed, %d left for the next round",
            flushed.sent,
            flushed.unrouted,
            len(flushed.failed),
            flushed.deferred,
        )
