"""One Microsoft Graph subscription per Teams channel with alerts on, kept alive by ``runbook
serve``: the ``teams_graph_subscriptions`` rows (migration 018) and the job that reconciles one.

``runbook teams channel alerts … on --team GROUP_ID`` marks the channel's row wanted; ``off``
marks it unwanted. Every replica's schedule queues a ``teams.graph_subscription`` job for each
row that needs work (created, renewed before it lapses, or deleted), keyed by the row, the step
it needs and the schedule's slot, so replicas queue it once between them; a replica that serves
Teams with ``TEAMS_GRAPH_ALERTS=true`` runs it. A Graph failure is recorded on the row, not
retried by the queue: the next slot tries again.

Subscriptions last ``LIFETIME`` (under Graph's hour for channel messages without lifecycle
notifications) and are renewed once less than ``RENEW_BEFORE`` is left, so a replica down for
a few schedule rounds loses nothing.
"""

from __future__ import annotations

import logging
import secrets
import time
from collections.abc import Collection
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import Any

from psycopg.rows import class_row
from psycopg.types.json import Jsonb

from bot.core.alerts.channel_settings import channel_settings
from bot.core.jobs.periodic import rounds_running
from bot.core.jobs.queue import Job, JobQueue, JobRequest, JobTenant
from bot.core.secret_reseal import SealedColumn
from bot.core.token_cipher import TokenCipher
from bot.teams.graph.client import (
    GraphClient,
    GraphError,
    GraphSubscription,
    channel_resource,
)
from bot.teams.tenancy import find_teams_tenant
from rag import ConfigurationError, Store

logger = logging.getLogger(__name__)

SUBSCRIPTION_KIND = "teams.graph_subscription"
LIFETIME = timedelta(minutes=55)
RENEW_BEFORE = timedelta(minutes=20)
SCHEDULE_TICK_S = 60.0

# For `runbook secrets reencrypt` (bot.core.secret_reseal): each subscription's clientState.
GRAPH_SECRETS = (
    SealedColumn(
        "teams_graph_subscriptions",
        "client_state",
        "tenant_id || ' channel ' || channel_id",
        "Graph clientState of tenant",
    ),
)


@dataclass(frozen=True)
class SubscriptionRow:
    tenant_id: str
    aad_tenant_id: str
    channel_id: str
    team_id: str
    wanted: bool
    subscription_id: str | None
    client_state: dict[str, Any] | None
    expires_at: datetime | None
    last_error: str | None


_WANT = """
INSERT INTO teams_graph_subscriptions (tenant_id, aad_tenant_id, channel_id, team_id)
VALUES (%(tenant)s, %(aad)s, %(channel)s, %(team)s)
ON CONFLICT (tenant_id, aad_tenant_id, channel_id)
    DO UPDATE SET wanted = true, team_id = excluded.team_id, updated_at = now()
"""
_UNWANT = """
UPDATE teams_graph_subscriptions SET wanted = false, updated_at = now()
WHERE tenant_id = %(tenant)s AND aad_tenant_id = %(aad)s AND channel_id = %(channel)s
"""
_SELECT = """
SELECT tenant_id, aad_tenant_id, channel_id, team_id, wanted, subscription_id, client_state,
       expires_at, last_error
FROM teams_graph_subscriptions
"""
_ROW = _SELECT + (
    "WHERE tenant_id = %(tenant)s AND aad_tenant_id = %(aad)s AND channel_id = %(channel)s"
)
_BY_SUBSCRIPTION = _SELECT + "WHERE subscription_id = ANY(%s)"
_DUE = _SELECT + "WHERE NOT wanted OR subscription_id IS NULL OR expires_at < now() + %(renew)s"
_RECORD = """
UPDATE teams_graph_subscriptions
SET subscription_id = %(subscription)s, client_state = %(state)s, expires_at = %(expires)s,
    last_error = NULL, updated_at = now()
WHERE tenant_id = %(tenant)s AND aad_tenant_id = %(aad)s AND channel_id = %(channel)s AND wanted
"""
_FAILED = """
UPDATE teams_graph_subscriptions SET last_error = %(error)s
WHERE tenant_id = %(tenant)s AND aad_tenant_id = %(aad)s AND channel_id = %(channel)s
"""
# Only a row still unwanted goes: switched on again meanwhile, it stays for the next round.
_FORGET = """
DELETE FROM teams_graph_subscriptions
WHERE tenant_id = %(tenant)s AND aad_tenant_id = %(aad)s AND channel_id = %(channel)s
  AND NOT wanted
"""


async def want_subscription(
    store: Store, tenant: str, aad_tenant: str, channel_id: str, team_id: str
) -> None:
    """The channel's alerts are on: keep a subscription on its messages."""
    async with store.pool.connection() as conn:
        await conn.execute(_WANT, _key(tenant, aad_tenant, channel_id) | {"team": team_id})


async def drop_subscription(store: Store, tenant: str, aad_tenant: str, channel_id: str) -> bool:
    """The channel's alerts are off: its subscription goes at the next round; False when it
    had none."""
    async with store.pool.connection() as conn:
        cur = await conn.execute(_UNWANT, _key(tenant, aad_tenant, channel_id))
        return cur.rowcount > 0


async def subscription_row(
    store: Store, tenant: str, aad_tenant: str, channel_id: str
) -> SubscriptionRow | None:
    async with store.pool.connection() as conn:
        cur = conn.cursor(row_factory=class_row(SubscriptionRow))
        await cur.execute(_ROW, _key(tenant, aad_tenant, channel_id))
        return await cur.fetchone()


async def subscriptions_by_id(
    store: Store, subscription_ids: Collection[str]
) -> dict[str, SubscriptionRow]:
    """The rows of those of ``subscription_ids`` that exist, by id, in one query."""
    if not subscription_ids:
        return {}
    async with store.pool.connection() as conn:
        cur = conn.cursor(row_factory=class_row(SubscriptionRow))
        await cur.execute(_BY_SUBSCRIPTION, (list(subscription_ids),))
        return {row.subscription_id: row for row in await cur.fetchall() if row.subscription_id}


async def due_subscriptions(store: Store) -> list[SubscriptionRow]:
    """Rows to create, renew or delete now."""
    async with store.pool.connection() as conn:
        cur = conn.cursor(row_factory=class_row(SubscriptionRow))
        await cur.execute(_DUE, {"renew": RENEW_BEFORE})
        return await cur.fetchall()


class SubscriptionJob:
    """The ``teams.graph_subscription`` job: bring one channel's subscription in line with its
    row (create, renew, or delete and forget)."""

    def __init__(
        self, *, store: Store, graph: GraphClient, cipher: TokenCipher, notification_url: str
    ) -> None:
        self._store = store
        self._graph = graph
        self._cipher = cipher
        self._notification_url = notification_url

    async def run(self, job: Job) -> None:
        tenant, aad, channel = (str(job.payload[k]) for k in ("tenant", "aad_tenant", "channel_id"))
        row = await subscription_row(self._store, tenant, aad, channel)
        if row is None:
            return
        try:
            await self._reconcile(row)
        except GraphError as exc:
            logger.warning("Graph subscription of %s: %s", channel, exc)
            async with self._store.pool.connection() as conn:
                await conn.execute(_FAILED, _key(tenant, aad, channel) | {"error": str(exc)})

    async def give_up(self, job: Job) -> None:
        logger.warning("Graph subscription job %s gave up; the next round tries again", job.job_id)

    async def _reconcile(self, row: SubscriptionRow) -> None:
        key = _key(row.tenant_id, row.aad_tenant_id, row.channel_id)
        if row.wanted and not await self._still_wanted(row):
            # The organisation was unmapped, or alerts switched off some other way: the
            # subscription would only bring notifications that end in silence.
            async with self._store.pool.connection() as conn:
                await conn.execute(_UNWANT, key)
            row = replace(row, wanted=False)
        if not row.wanted:
            if row.subscription_id is not None:
                await self._graph.delete_subscription(row.aad_tenant_id, row.subscription_id)
            async with self._store.pool.connection() as conn:
                await conn.execute(_FORGET, key)
            logger.info("Graph subscription of %s deleted", row.channel_id)
            return
        now = datetime.now(UTC)
        if row.subscription_id is not None and row.expires_at is not None:
            if row.expires_at > now + RENEW_BEFORE:
                return  # another run renewed it since this job was queued
            secret = client_state_of(row, self._cipher)
            renewed = (
                None
                if secret is None
                else await self._graph.renew_subscription(
                    row.aad_tenant_id, row.subscription_id, now + LIFETIME
                )
            )
            if secret is not None and renewed is not None:
                # Sealed again with the first key: a rotated-out key is unused within a renewal.
                await self._record(key, renewed, self._cipher.seal({"secret": secret}))
                return
        # None yet, Graph let it lapse, or its secret cannot be opened: a new one, a new secret.
        secret = secrets.token_urlsafe(32)
        created = await self._graph.create_subscription(
            row.aad_tenant_id,
            resource=channel_resource(row.team_id, row.channel_id),
            notification_url=self._notification_url,
            client_state=secret,
            expires_at=now + LIFETIME,
        )
        await self._record(key, created, self._cipher.seal({"secret": secret}))
        logger.info("Graph subscription of %s created", row.channel_id)

    async def _still_wanted(self, row: SubscriptionRow) -> bool:
        if await find_teams_tenant(self._store, row.aad_tenant_id) != row.tenant_id:
            return False
        switches = await channel_settings(
            self._store, row.tenant_id, row.aad_tenant_id, row.channel_id
        )
        return switches.alerts

    async def _record(
        self, key: dict[str, str], made: GraphSubscription, state: dict[str, Any] | None
    ) -> None:
        params = key | {
            "subscription": made.subscription_id,
            "state": Jsonb(state),
            "expires": made.expires_at,
        }
        async with self._store.pool.connection() as conn:
            await conn.execute(_RECORD, params)


def client_state_of(row: SubscriptionRow, cipher: TokenCipher) -> str | None:
    """The subscription's clientState secret, opened."""
    if row.client_state is None:
        return None
    try:
        secret = cipher.open(row.client_state, what="a Graph clientState").get("secret")
    except ConfigurationError:
        # Sealed with a key no longer in RUNBOOK_ENCRYPTION_KEYS: unverifiable until the
        # subscription is made again (switch the channel's alerts off and on).
        logger.warning("Graph subscription of %s: its secret cannot be opened", row.channel_id)
        return None
    return secret if isinstance(secret, str) else None


async def queue_due_subscription_work(store: Store, jobs: JobQueue) -> int:
    """Queue this slot's job for every row that needs one; returns how many were new."""
    slot = int(time.time() // SCHEDULE_TICK_S)
    queued = 0
    for row in await due_subscriptions(store):
        request = JobRequest(
            kind=SUBSCRIPTION_KIND,
            dedupe_key=f"{SUBSCRIPTION_KIND}:{row.aad_tenant_id}:{row.channel_id}:{_step(row)}:{slot}",
            payload={
                "tenant": row.tenant_id,
                "aad_tenant": row.aad_tenant_id,
                "channel_id": row.channel_id,
            },
            tenant=JobTenant(tenant_id=row.tenant_id),
        )
        async with jobs.intake() as conn:
            if await jobs.insert(conn, request):
                queued += 1
    if queued:
        jobs.new_work.set()
    return queued


def graph_schedule_running(store: Store, jobs: JobQueue) -> AbstractAsyncContextManager[None]:
    """Queue due subscription work in the background for the duration of the block."""
    return rounds_running(
        "graph-subscriptions",
        lambda: queue_due_subscription_work(store, jobs),
        every_s=SCHEDULE_TICK_S,
        queued="queued %d Graph subscription jobs",
    )


def _step(row: SubscriptionRow) -> str:
    """What the row needs, as of its last change: a switch turned off or a renewal recorded
    queues its job at once, not a slot later; a failing step is tried again each slot."""
    if not row.wanted:
        return "delete"
    if row.expires_at is None:
        return "create"
    return f"renew-{row.expires_at.timestamp()}"


def _key(tenant: str, aad_tenant: str, channel_id: str) -> dict[str, str]:
    return {"tenant": tenant, "aad": aad_tenant, "channel": channel_id}
