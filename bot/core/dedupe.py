"""Intake dedupe for every surface: deliveries are at-least-once, answers must be exactly-once.

A delivery's key (a Slack ``event_id`` or trigger id, a Teams conversation and activity id) is
claimed set-if-absent in Postgres (shared by every replica), with an in-process TTL cache in
front so local retries and concurrent copies never reach the database. The delivery's job, if it
has one, is queued in the same statement: a claim and its work are never apart.

Claims use the queue's own small pool under a short timeout, so a busy answer pool never holds
an ack past Slack's 3 s. If the database does not take the claim in time, the delivery is
*held*, not let through: it is acked, and the claim is retried in the background until it is
written; then the job row, unique per key across replicas, decides who answers, once. Retry
headers are deliberately ignored: a retry may be the only copy that ever arrived.
"""

from __future__ import annotations

import asyncio
import enum
import logging

import psycopg
from cachetools import TTLCache

from bot.core.jobs.queue import AnyConnection, JobQueue, JobRequest
from rag import Store

logger = logging.getLogger(__name__)

# Slack's last retry comes ~5 minutes after the first delivery; an hour leaves a wide margin.
_TTL_SECONDS = 3600
_PRUNE_EVERY = 1000
_CLAIM_TIMEOUT_S = 1.0  # without a queue; with one, its intake timeout

_CLAIM = """
INSERT INTO events_seen (event_id) VALUES (%(event_id)s)
ON CONFLICT (event_id) DO NOTHING
RETURNING event_id
"""
# Rows are kept a day, well past the TTL; event ids are never reused, so that is only hygiene.
_PRUNE = "DELETE FROM events_seen WHERE seen_at < now() - interval '1 day'"


class Claim(enum.Enum):
    """What became of a delivery's claim."""

    CLAIMED = "claimed"  # this copy is the one that answers
    DUPLICATE = "duplicate"  # another copy of the same delivery already claimed it
    HELD = "held"  # the database did not answer in time; it is claimed later, in the background
    REFUSED = "refused"  # the database refused the claim


class EventDeduper:
    """``first_delivery(key)`` is True exactly once per key within the TTL.

    The cache is touched only from the event loop (cachetools is not thread-safe).
    """

    def __init__(
        self, store: Store, *, queue: JobQueue | None = None, ttl_seconds: int = _TTL_SECONDS
    ) -> None:
        self._store = store
        self._queue = queue
        self._seen: TTLCache[str, bool] = TTLCache(maxsize=100_000, ttl=ttl_seconds)
        self._claims = 0
        self._timeout_s = queue.settings.intake_timeout_s if queue else _CLAIM_TIMEOUT_S

    async def first_delivery(self, key: str, job: JobRequest | None = None) -> bool:
        """Claim ``key`` (and queue ``job``, whose dedupe key it is, with it). False for a copy
        already claimed, and for one whose claim is held because the database did not answer
        in time."""
        return await self.claim(key, job) is Claim.CLAIMED

    async def claim(self, key: str, job: JobRequest | None = None) -> Claim:
        """``first_delivery``, telling a duplicate apart from a held or refused claim (a
        surface may answer a duplicate differently from a first copy whose job comes later)."""
        if job is not None and job.dedupe_key != key:
            raise ValueError(f"job {job.dedupe_key!r} queued under another delivery key {key!r}")
        if key in self._seen:
            return Claim.DUPLICATE
        # Claimed before the first await, so a concurrent copy in this process stops above.
        self._seen[key] = True
        if self._queue is not None and self._queue.database.down:
            # A known outage: hold at once rather than make Slack wait for a timeout.
            logger.warning("claim of %s held: the database is down", key)
            self._hold(key, job)
            return Claim.HELD
        try:
            claimed = await self._claim_within(key, job)
        except (psycopg.OperationalError, TimeoutError) as exc:
            logger.warning("claim of %s held: %s", key, type(exc).__name__)
            if self._queue is not None:
                self._queue.database.suspect()
            self._hold(key, job)
            return Claim.HELD
        except psycopg.Error as exc:  # refused, not unreachable: holding it would not help
            logger.error("claim of %s refused by the database: %s", key, type(exc).__name__)
            return Claim.REFUSED
        if not claimed:
            return Claim.DUPLICATE
        if job is not None and self._queue is not None:
            self._queue.new_work.set()
        return Claim.CLAIMED

    def _hold(self, key: str, job: JobRequest | None) -> None:
        if self._queue is not None and job is not None:
            self._queue.hold(lambda: self._claim_within(key, job), key=key)

    async def _claim_within(self, key: str, job: JobRequest | None) -> bool:
        async with asyncio.timeout(self._timeout_s):
            return await self._claim(key, job)

    async def _claim(self, key: str, job: JobRequest | None) -> bool:
        if self._queue is None:
            async with self._store.pool.connection(timeout=self._timeout_s) as conn:
                return await self._claim_on(conn, key)
        async with self._queue.intake() as conn:
            if job is None:
                return await self._claim_on(conn, key)
            # The job's key is the delivery's: one statement claims it and queues the job.
            claimed = await self._queue.insert(conn, job)
            await self._count_claim(conn)
            return claimed

    async def _claim_on(self, conn: AnyConnection, key: str) -> bool:
        cur = await conn.execute(_CLAIM, {"event_id": key})
        claimed = await cur.fetchone() is not None
        await self._count_claim(conn)
        return claimed

    async def _count_claim(self, conn: AnyConnection) -> None:
        self._claims += 1
        if self._claims % _PRUNE_EVERY == 0:
            await conn.execute(_PRUNE)
