"""The durable work queue: every accepted piece of work is a ``jobs`` row before its ack.

Any surface (Slack events, commands, shortcuts and buttons; later Teams activities and alert
posts) turns a request into a ``JobRequest``: a handler ``kind``, a JSON ``payload`` of its own
shape, and a ``dedupe_key`` (its delivery id). The row is inserted in the same transaction as the
delivery's dedupe claim (``bot.core.dedupe``), on a small intake pool of its own, so an ack
never waits behind answer work. Workers in every ``runbook serve`` claim rows with a lease that
their heartbeat extends (``bot.core.jobs.worker``); when a process dies its lease runs out and
another replica claims the job again.

Why not pgqueuer or procrastinate: both would do the claiming, but each installs and upgrades
its own schema with its own tool (``pgq install/upgrade``, ``procrastinate schema --apply``)
beside our numbered migrations, runs its own worker loop and signal handling next to the
aiohttp server's drain, and neither knows the two things this queue is about: the deadline that
ends in a visible "ask again" card, and the answer a job stored, which a re-run must find
instead of posting twice. Enqueueing in our own transaction needs procrastinate's newest
``connection=`` or pgqueuer's driver wrapping our connection. What is left is one
``FOR UPDATE SKIP LOCKED`` claim, a lease and a heartbeat: about a page of SQL, below.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Collection
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import psycopg
from psycopg.rows import TupleRow, dict_row
from psycopg.types.json import Jsonb
from psycopg_pool import AsyncConnectionPool

from bot.core.jobs.database_watch import DatabaseWatch
from bot.core.jobs.values import Job, JobRequest, JobTenant, QueueStats, storable_json
from bot.core.statements import Statement, send_together
from bot.cpu_priority import short_slices_for_backend
from rag import RECONNECT_TIMEOUT_S, Settings, Store

logger = logging.getLogger(__name__)

AnyConnection = psycopg.AsyncConnection[TupleRow]

__all__ = ["Job", "JobQueue", "JobRequest", "JobTenant", "QueueStats", "storable_json"]


# One statement, one round trip, atomic in autocommit: the delivery's dedupe claim
# (``events_seen``, as ``bot.core.dedupe`` claims a key) and its job, queued only if the claim is
# new. The tenant is resolved in the same statement, as ``rag.find_tenant`` and
# ``find_teams_tenant`` would (NULL when not connected): nothing is added before the ack.
_INSERT = """
WITH claimed AS (
    INSERT INTO events_seen (event_id) VALUES (%(dedupe_key)s)
    ON CONFLICT (event_id) DO NOTHING
    RETURNING event_id
)
INSERT INTO jobs (job_id, kind, dedupe_key, payload, max_attempts, deadline_at, tenant_id)
SELECT %(job_id)s, %(kind)s, claimed.event_id, %(payload)s, %(max_attempts)s,
       now() + make_interval(secs => %(deadline_s)s),
       coalesce(
           %(tenant)s::text,
           (SELECT tenant_id FROM workspaces
            WHERE (enterprise_id = %(enterprise)s AND team_id = %(team)s)
               OR (%(enterprise)s <> '' AND enterprise_id = %(enterprise)s AND team_id = '*')
            ORDER BY team_id = '*' LIMIT 1),
           (SELECT tenant_id FROM teams_tenants WHERE aad_tenant_id = %(aad_tenant)s))
FROM claimed
ON CONFLICT (dedupe_key) DO NOTHING
RETURNING job_id
"""

# The next job by tenant turns, among the kinds this worker serves (``next_job``, migration
# 016), less the capped kind while its cap is reached (a deployment's source syncs: they must
# never take every worker); the subquery runs once, and its row stays locked for this UPDATE.
_CLAIM = """
UPDATE jobs SET state = 'running', attempts = attempts + 1, worker = %(worker)s,
       lease_token = gen_random_uuid(),
       available_at = now() + make_interval(secs => %(lease_s)s)
WHERE job_id = (SELECT next_job(
    CASE WHEN (SELECT count(*) FROM jobs
               WHERE kind = %(capped)s AND state = 'running' AND available_at > now()) >= %(cap)s
         THEN array_remove(%(kinds)s::text[], %(capped)s) ELSE %(kinds)s::text[] END,
    %(full)s))
RETURNING job_id, kind, payload, attempts, max_attempts, tenant_id, answer_id, lease_token,
          extract(epoch FROM now() - created_at)::float8 AS age_s, deadline_at < now() AS overdue,
          extract(epoch FROM deadline_at - now())::float8 AS remaining_s
"""

# A worker restarted in its slot (``runbook serve --role all``) puts back at once what it held
# when it died, instead of leaving it to its lease; the crash still counts as an attempt.
_RELEASE_STALE = """
UPDATE jobs SET state = 'queued', lease_token = NULL, worker = NULL, available_at = now()
WHERE worker = %(worker)s AND state = 'running'
"""

_HEARTBEAT = """
UPDATE jobs SET available_at = now() + make_interval(secs => %(lease_s)s)
WHERE job_id = %(job_id)s AND lease_token = %(token)s AND state = 'running'
RETURNING 1
"""

_FINISH = """
UPDATE jobs SET state = %(state)s, outcome = %(outcome)s, finished_at = now(),
       payload = '{}', lease_token = NULL
WHERE job_id = %(job_id)s AND lease_token = %(token)s
"""

# Back in line: after a failure (later, by ``delay_s``), or now when a drain gave it up; a
# drained run was not the job's fault, so it does not count against its attempts.
_REQUEUE = """
UPDATE jobs SET state = 'queued', lease_token = NULL, worker = NULL,
       attempts = attempts - %(refund)s,
       available_at = now() + make_interval(secs => %(delay_s)s)
WHERE job_id = %(job_id)s AND lease_token = %(token)s
"""

_LINK_ANSWER = """
UPDATE jobs SET tenant_id = %(tenant)s, answer_id = COALESCE(answer_id, %(answer_id)s)
WHERE job_id = %(job_id)s
RETURNING answer_id
"""

# What a run did that a re-run must know (e.g. the id of a message it posted), merged into
# the payload; only by the current claim, so a worker that lost its lease cannot overwrite it.
_NOTE = """
UPDATE jobs SET payload = payload || %(facts)s
WHERE job_id = %(job_id)s AND lease_token = %(token)s
"""

_PRUNE = """
DELETE FROM jobs
WHERE state IN ('done', 'dead') AND finished_at < now() - make_interval(secs => %(keep_s)s)
"""
_PRUNE_TURNS = """
DELETE FROM job_turns WHERE served_at < now() - make_interval(secs => %(keep_s)s)
"""

_STATS = """
SELECT count(*) FILTER (WHERE state = 'queued'),
       count(*) FILTER (WHERE state = 'running'),
       count(*) FILTER (WHERE state = 'dead'),
       COALESCE(extract(epoch FROM now() - min(created_at)
                FILTER (WHERE state IN ('queued', 'running'))), 0)::float8
FROM jobs
"""


@dataclass
class _Held:
    """A claim the database did not take in time; retried until ``until`` (monotonic)."""

    write: Callable[[], Awaitable[object]]
    until: float
    key: str


@dataclass
class JobQueue:
    """The ``jobs`` table. Intake claims have a small pool of their own; the workers'
    bookkeeping (claims, heartbeats) uses the store's pool, off the ack's path."""

    store: Store
    intake_pool: AsyncConnectionPool[AnyConnection]
    settings: Settings
    # Whether the database answers; intake, workers and /healthz wait on it during an outage.
    database: DatabaseWatch
    worker_name: str = field(default_factory=lambda: uuid.uuid4().hex[:12])
    # Set when this process queued a job, so its worker claims it without waiting for a poll.
    new_work: asyncio.Event = field(default_factory=asyncio.Event)
    _held: list[_Held] = field(default_factory=list)

    @classmethod
    async def open(cls, store: Store, settings: Settings, *, acks: bool = False) -> JobQueue:
        """A queue over ``store``'s database with its own intake pool (same server, same URL).

        ``acks``: this process acks (the web role), so the intake pool is opened whole, each
        connection rehearses a claim before its first ack, and its backends share the web
        process's short time slice (``bot.cpu_priority``)."""

        async def configure(conn: AnyConnection) -> None:
            short_slices_for_backend(conn, settings.web_slice_us)
            await _rehearse_claim(conn, settings)

        pool: AsyncConnectionPool[AnyConnection] = AsyncConnectionPool(
            store.pool.conninfo,
            # An ack that finds the pool still growing waits for a connection to be made.
            min_size=settings.intake_pool_size if acks else 1,
            max_size=settings.intake_pool_size,
            configure=configure if acks else None,
            # Short on purpose: an intake claim that cannot get a connection at once is held
            # and retried (see ``hold``), instead of keeping Slack waiting past its 3 s.
            timeout=settings.intake_timeout_s,
            kwargs={"autocommit": True},
            # No check at checkout (a round trip per ack): see ``rag.store.connection`` and the
            # watch.
            reconnect_timeout=RECONNECT_TIMEOUT_S,
            open=False,
            name="runbook-intake",
        )
        await pool.open(wait=True, timeout=30)
        database = DatabaseWatch(store, pools=[pool])
        queue = cls(store=store, intake_pool=pool, settings=settings, database=database)
        # Back from an outage: held claims are written and workers claim, without a poll's wait.
        database.on_recovery(queue.new_work.set)
        return queue

    async def close(self) -> None:
        if self._held:
            logger.error("%d accepted deliveries never reached the database", len(self._held))
        await self.database.close()
        await self.intake_pool.close()

    @asynccontextmanager
    async def intake(self) -> AsyncIterator[AnyConnection]:
        """A connection from the intake pool (autocommit), for a claim and its job."""
        async with self.intake_pool.connection() as conn:
            yield conn

    async def insert(self, conn: AnyConnection, request: JobRequest) -> bool:
        """Claim ``request``'s delivery key and queue it, in one statement; False when the key
        was claimed before (a duplicate delivery: nothing is queued)."""
        cur = await conn.execute(_INSERT, _insert_params(request, self.settings), prepare=True)
        return await cur.fetchone() is not None

    def hold(self, write: Callable[[], Awaitable[object]], *, key: str) -> None:
        """Keep a claim the database could not take; the worker retries ``write`` every tick.

        Failing closed: the delivery was acked, so Slack will not send it again, and it must
        not be answered now either (a copy on another replica may be claiming it this moment).
        Once ``write`` succeeds, the job row decides who answers, exactly once.
        """
        self._held.append(_Held(write, time.monotonic() + self.settings.job_deadline_s, key))

    @property
    def held(self) -> int:
        return len(self._held)

    async def retry_held(self) -> None:
        still: list[_Held] = []
        for held in self._held:
            try:
                await held.write()
            except (psycopg.OperationalError, TimeoutError) as exc:
                if time.monotonic() < held.until:
                    still.append(held)
                else:
                    logger.error("gave up claiming %s: %s", held.key, type(exc).__name__)
            except psycopg.Error as exc:
                logger.error(
                    "claim of %s refused by the database: %s", held.key, type(exc).__name__
                )
            else:
                logger.info("claimed %s after the database came back", held.key)
        self._held = still

    async def claim(
        self,
        kinds: Collection[str],
        *,
        full: Collection[str] = (),
        capped: tuple[str, int] | None = None,
    ) -> Job | None:
        """The next job of one of ``kinds`` (those this process has handlers for), tenants
        taking turns; tenants in ``full`` (keys as ``tenant_key``) are passed over. ``capped``
        (kind, cap): that kind only while fewer than ``cap`` of it run in the whole queue."""
        capped_kind, cap = capped or (None, 0)
        params = {
            "worker": self.worker_name,
            "lease_s": self.settings.job_lease_s,
            "kinds": list(kinds),
            "full": list(full),
            "capped": capped_kind,
            "cap": cap,
        }
        async with self.store.pool.connection() as conn:
            cur = conn.cursor(row_factory=dict_row)
            await cur.execute(_CLAIM, params)
            row = await cur.fetchone()
        if row is None:
            return None
        return Job(
            job_id=row["job_id"],
            kind=row["kind"],
            payload=row["payload"],
            attempts=row["attempts"],
            max_attempts=row["max_attempts"],
            age_s=row["age_s"],
            overdue=row["overdue"],
            lease_token=row["lease_token"],
            tenant_id=row["tenant_id"],
            answer_id=None if row["answer_id"] is None else str(row["answer_id"]),
            remaining_s=row["remaining_s"],
        )

    async def release_stale(self) -> int:
        """Put back what a previous process of this ``worker_name`` held when it died."""
        return await release_jobs_of(self.store, self.worker_name)

    async def heartbeat(self, job: Job) -> bool:
        """Extend the lease; False when it was lost (another worker holds the job now)."""
        params = {"job_id": job.job_id, "token": job.lease_token}
        async with self.store.pool.connection() as conn:
            cur = await conn.execute(_HEARTBEAT, {**params, "lease_s": self.settings.job_lease_s})
            return await cur.fetchone() is not None

    async def finish(self, job: Job, *, dead: bool = False, outcome: str = "") -> None:
        params = {"job_id": job.job_id, "token": job.lease_token, "outcome": outcome}
        await self._settle(job, Statement(_FINISH, {**params, "state": "dead" if dead else "done"}))

    async def requeue(self, job: Job, *, delay_s: float, refund: bool = False) -> None:
        params = {"job_id": job.job_id, "token": job.lease_token, "delay_s": delay_s}
        await self._settle(job, Statement(_REQUEUE, {**params, "refund": int(refund)}))

    async def _settle(self, job: Job, fate: Statement) -> None:
        """The job's fate with the writes its run left (``Job.pending``) before it: all or
        none, in one round trip; kept for the next try when the database did not take them."""
        await send_together(self.store, [*job.pending, fate])
        job.pending.clear()

    async def note(self, job: Job, facts: dict[str, Any]) -> None:
        """Keep ``facts`` in the job's payload: a re-run claims them with it, and this run's
        own ``give_up`` (after its deadline cut ``run`` short) sees them in ``job.payload``."""
        facts = storable_json(facts)
        job.payload.update(facts)
        params = {"job_id": job.job_id, "token": job.lease_token, "facts": Jsonb(facts)}
        async with self.store.pool.connection() as conn:
            await conn.execute(_NOTE, params)

    async def prune(self) -> int:
        """Delete finished jobs older than the retention window; returns how many."""
        keep_s = self.settings.job_retention_h * 3600
        async with self.store.pool.connection() as conn:
            cur = await conn.execute(_PRUNE, {"keep_s": keep_s})
            await conn.execute(_PRUNE_TURNS, {"keep_s": keep_s})
            return cur.rowcount

    async def stats(self) -> QueueStats:
        async with self.store.pool.connection() as conn:
            cur = await conn.execute(_STATS)
            row = await cur.fetchone()
        assert row is not None  # an aggregate always returns a row
        return QueueStats(queued=row[0], running=row[1], dead=row[2], oldest_age_s=row[3])


def link_row(job: Job, tenant: str, answer_id: str) -> Statement:
    """The statement that links ``job`` to the answer it stored; it returns the linked answer's
    id (an earlier run's, if one was linked first)."""
    return Statement(
        _LINK_ANSWER, {"job_id": job.job_id, "tenant": tenant, "answer_id": uuid.UUID(answer_id)}
    )


async def release_jobs_of(store: Store, worker_name: str) -> int:
    """Put back at once the jobs a worker held when it died (its supervisor saw it go)."""
    async with store.pool.connection() as conn:
        cur = await conn.execute(_RELEASE_STALE, {"worker": worker_name})
        return cur.rowcount


def _insert_params(request: JobRequest, settings: Settings) -> dict[str, Any]:
    tenant = request.tenant
    return {
        "job_id": uuid.uuid4(),
        "kind": request.kind,
        "dedupe_key": request.dedupe_key,
        "payload": Jsonb(storable_json(request.payload)),
        "max_attempts": settings.job_max_attempts,
        "deadline_s": request.deadline_s or settings.job_deadline_s,
        "tenant": tenant.tenant_id,
        "team": tenant.slack_team_id or "",
        "enterprise": tenant.slack_enterprise_id or "",
        "aad_tenant": tenant.teams_aad_tenant or "",
    }


async def _rehearse_claim(conn: AnyConnection, settings: Settings) -> None:
    """One claim on a new intake connection, rolled back: the backend's first use (its catalog
    caches, the statement's plan) is paid here, not by the first ack after a start (measured:
    4-7 ms for a fresh backend's first claim, under 1 ms after the rehearsal)."""
    rehearsal = JobRequest(kind="rehearsal", dedupe_key=f"rehearsal-{uuid.uuid4()}", payload={})
    async with conn.transaction(force_rollback=True):
        await conn.execute(_INSERT, _insert_params(rehearsal, settings), prepare=True)
