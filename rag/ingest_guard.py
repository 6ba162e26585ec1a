"""What keeps an ingest from hurting a tenant: one ingest of a tenant at a time, and no prune
of most of its runbooks by accident (an empty checkout looks exactly like "all deleted").
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager

from rag.errors import PruneRefusedError
from rag.ingest_scan import StoredVersion, TenantScan
from rag.store import Store

logger = logging.getLogger(__name__)

# The first key of the two-key advisory lock space: ingests of a tenant, nothing else. The
# two-key space never overlaps the one-key locks that migrations take; document writes use
# another first key (rag/ingest_write.py).
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


_SOURCE_OWNED = """
SELECT i.document_id FROM source_items AS i JOIN sources AS s USING (source_id)
WHERE s.tenant_id = %(tenant)s AND i.document_id IS NOT NULL
"""


async def documents_sources_own(store: Store, tenant: str) -> set[str]:
    """The tenant's documents that a runbook source publishes: only its syncs retire them, never
    a prune of a folder ingest (the folder does not hold them; the source does)."""
    async with store.pool.connection() as conn:
        cur = await conn.execute(_SOURCE_OWNED, {"tenant": tenant})
        return {row[0] for row in await cur.fetchall()}


def documents_to_prune(
    tenant: str, stored: dict[str, StoredVersion], scan: TenantScan, *, force: bool
) -> list[str]:
    """The current documents whose files are gone; refuse more than half without ``force``."""
    current = {doc_id: v for doc_id, v in stored.items() if not v.superseded}
    gone = sorted(doc_id for doc_id, v in current.items() if not scan.keeps(doc_id, v.source_path))
    if gone and not force and len(gone) * 2 > len(current):
        raise PruneRefusedError(tenant=tenant, retiring=len(gone), current=len(current))
    return gone
