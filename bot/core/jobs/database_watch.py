"""``DatabaseWatch``: whether the database answers, known at once, and its return noticed fast.

While the database is unreachable, work that needs it waits on ``until_up`` instead of turning
the outage into a card, an abstention or a spent attempt: a job keeps its place and runs again
the moment the database answers, intake holds its claims without first waiting out a timeout,
and ``/healthz`` says 503 at once. One probe loop, on a connection of its own outside the pools,
notices the return within ``PROBE_EVERY_S``; the pools are then checked, so they replace their
broken connections now instead of at their next reconnection backoff (up to 16 s later). The
pools do not test connections at checkout (a round trip each), so a database error met while
the database answers (a restart shorter than anyone noticed) also has them checked.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Sequence
from typing import Any

import psycopg
from psycopg.rows import TupleRow
from psycopg_pool import AsyncConnectionPool

from rag import Store, StoreError

logger = logging.getLogger(__name__)

PROBE_EVERY_S = 0.25
PROBE_TIMEOUT_S = 1.0

# What an unreachable database raises: psycopg's connection and pool errors (a pool timeout and
# a closed pool are OperationalErrors), a closed connection, and the core's translation.
UNREACHABLE = (psycopg.OperationalError, psycopg.InterfaceError, StoreError)


def unreachable(exc: BaseException) -> bool:
    """Whether ``exc`` may mean the database is unreachable (a probe tells for sure)."""
    return isinstance(exc, UNREACHABLE)


class DatabaseWatch:
    def __init__(self, store: Store, *, pools: Sequence[AsyncConnectionPool[Any]] = ()) -> None:
        self._store = store
        self._pools = (store.pool, *pools)
        self._up = asyncio.Event()
        self._up.set()
        self._conn: psycopg.AsyncConnection[TupleRow] | None = None
        self._probe_lock = asyncio.Lock()
        self._prober: asyncio.Task[None] | None = None
        self._suspicion: asyncio.Task[bool] | None = None
        self._pool_check: asyncio.Task[None] | None = None
        self._on_recovery: list[Callable[[], None]] = []
        # Outages seen so far: an error from a call that overlapped one (and failed only after
        # the database was back) is the outage's, not the call's.
        self.outages = 0

    @property
    def down(self) -> bool:
        return not self._up.is_set()

    def on_recovery(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` (on the loop) each time the database answers again."""
        self._on_recovery.append(callback)

    async def outage_since(self, outages: int, exc: BaseException) -> bool:
        """Whether ``exc``, raised by a call made when ``outages`` was the count, is an
        outage's: one under way (confirmed by a probe now) or one that began since."""
        if not unreachable(exc):
            return False
        return await self.confirm_down() or self.outages != outages

    async def confirm_down(self) -> bool:
        """After a database error: probe now. True (and watching for its return) when the
        database does not answer; False when it does, so the error was the statement's own,
        or a connection a restart broke (the pools are checked for more of those)."""
        if self.down:
            return True
        if await self._probe():
            self._check_pools_soon()
            return False
        self._mark_down()
        return True

    def suspect(self) -> None:
        """``confirm_down`` in the background, for a caller that must not wait (an ack)."""
        if self.down or self._suspicion is not None:
            return
        self._suspicion = asyncio.create_task(self.confirm_down())
        self._suspicion.add_done_callback(self._suspicion_done)

    def _suspicion_done(self, _: asyncio.Task[bool]) -> None:
        self._suspicion = None

    async def until_up(self) -> None:
        """Return once the database answers (at once when it is not known to be down)."""
        await self._up.wait()

    async def check(self) -> bool:
        """For ``/healthz``: False at once during a known outage, else one probe."""
        return not await self.confirm_down()

    async def close(self) -> None:
        for task in (self._suspicion, self._prober, self._pool_check):
            if task is not None:
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
        async with self._probe_lock:
            if self._conn is not None:
                await self._conn.close()
                self._conn = None

    def _mark_down(self) -> None:
        if self.down:
            return
        logger.warning("the database does not answer; work waits for it")
        self.outages += 1
        self._up.clear()
        self._prober = asyncio.create_task(self._watch_for_return(), name="database-watch")

    def _check_pools_soon(self) -> None:
        if self._pool_check is None:
            self._pool_check = asyncio.create_task(self._check_pools())
            self._pool_check.add_done_callback(self._pool_check_done)

    def _pool_check_done(self, _: asyncio.Task[None]) -> None:
        self._pool_check = None

    async def _check_pools(self) -> None:
        """Test the pools' idle connections; broken ones are replaced now, with fresh
        connection attempts (the pools do not test at checkout)."""
        for pool in self._pools:
            with contextlib.suppress(psycopg.Error):
                await pool.check()

    async def _watch_for_return(self) -> None:
        while True:
            if await self._probe():
                break
            await asyncio.sleep(PROBE_EVERY_S)
        await self._check_pools()
        logger.warning("the database answers again")
        self._up.set()
        for callback in self._on_recovery:
            callback()

    async def _probe(self) -> bool:
        """``SELECT 1`` on the watch's own connection, (re)connecting as needed."""
        async with self._probe_lock:
            try:
                async with asyncio.timeout(PROBE_TIMEOUT_S):
                    if self._conn is None or self._conn.closed:
                        self._conn = await self._store.connect_outside_pool()
                    await self._conn.execute("SELECT 1")
            except (*UNREACHABLE, TimeoutError, OSError):
                if self._conn is not None:
                    await self._conn.close()
                    self._conn = None
                return False
            return True
