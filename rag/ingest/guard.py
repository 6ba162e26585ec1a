"""What keeps an ingest from hurting a tenant: no prune of most of its runbooks by accident (an
empty checkout looks exactly like "all deleted"), and none of the runbooks a source publishes
(only its syncs retire those). One ingest of a tenant at a time is ``rag.store.tenant_locks``.
"""

from __future__ import annotations

import logging

from rag.errors import PruneRefusedError
from rag.ingest.scan import StoredVersion, TenantScan
from rag.store.connection import Store

logger = logging.getLogger(__name__)

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
