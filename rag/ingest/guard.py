"""What keeps an ingest from hurting a tenant: no prune of most of its runbooks by accident (an
empty checkout looks exactly like "all deleted"). One ingest of a tenant at a time is
``rag.store.tenant_locks``.
"""

from __future__ import annotations

import logging

from rag.errors import PruneRefusedError
from rag.ingest.scan import StoredVersion, TenantScan

logger = logging.getLogger(__name__)


def documents_to_prune(
    tenant: str, stored: dict[str, StoredVersion], scan: TenantScan, *, force: bool
) -> list[str]:
    """The current documents whose files are gone; refuse more than half without ``force``."""
    current = {doc_id: v for doc_id, v in stored.items() if not v.superseded}
    gone = sorted(doc_id for doc_id, v in current.items() if not scan.keeps(doc_id, v.source_path))
    if gone and not force and len(gone) * 2 > len(current):
        raise PruneRefusedError(tenant=tenant, retiring=len(gone), current=len(current))
    return gone
