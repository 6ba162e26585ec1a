"""Each tenant's ingest lock: one writer of a tenant's runbooks at a time, across processes.

Ingest, source syncs and partition moves all take it, so it lives with the store they share.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager

from rag.store.connection import Store

logger = logging.getLogger(__name__)

# The first key of the two-key advisory lock space: ingests of a tenant, nothing else. The
# two-key space never overlaps the one-key locks that migrations take; document writes use
# another first key (rag/ingest/write.py).
_INGEST_LOCK_SPACE = 0x52554E42  # "RUNB"

_TRY_LOCK_TENANT = "SELECT pg_try_advisory_xact_lock(%(space)s, hashtext(%(tenant)s))"
_LOCK_TENANT = "SELECT pg_advisory_xact_lock(%(space)s, hashtext(%(tenant)s))"


@asynccontextmanager
async def hold_tenant_locks(store: Store, tenants: Iterable[str]) -> AsyncIterator[None]:
    """Hold each tenant's ingest lock until the block ends; a second ingest waits its turn.

    A transaction-level lock on a connection of its own: it never takes a pool slot the ingest
    needs, ends with the connection if the process dies, and holds under PgBouncer's transaction
    pooling (a session lock would not). Tenants lock in sorted order, so two multi-tenant
    ingests cannot deadlock.
    """
    conn = await store.connect_outside_pool()
    async with conn, conn.transaction():
        for tenant in sorted(set(tenants)):
            params = {"space": _INGEST_LOCK_SPACE, "tenant": tenant}
            cur = await conn.execute(_TRY_LOCK_TENANT, params)
            row = await cur.fetchone()
            if row is None or not row[0]:
                logger.info("waiting for another ingest of tenant %s to finish", tenant)
                await conn.execute(_LOCK_TENANT, params)
        yield
