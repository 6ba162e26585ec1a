"""How the benchmark store is laid out after its load: the tenants rebalanced across partitions
the way ``runbook db rebalance`` does it, which tenants the service then scans exactly, and what
``chunks`` takes on disk over all its partitions."""

from __future__ import annotations

import time
from collections.abc import Collection
from typing import Any

from rag import Store, rebalance

# Issue 15's storage target: at most 2.5 GB (10^9 bytes) for every million chunks.
TARGET_BYTES_PER_MILLION = 2.5e9

# Sums over every leaf partition of chunks; pg_partition_tree() lists nothing for a table that
# is not partitioned, which is then its own only leaf.
_TABLE_SIZES = """
WITH leaves AS (
    SELECT relid FROM pg_partition_tree('chunks'::regclass) WHERE isleaf
    UNION SELECT oid FROM pg_class WHERE oid = 'chunks'::regclass AND relkind = 'r'
)
SELECT count(*),
       coalesce(sum(pg_table_size(c.oid)), 0),
       coalesce(sum(CASE WHEN c.reltoastrelid <> 0
                         THEN pg_total_relation_size(c.reltoastrelid) END), 0),
       coalesce(sum(pg_total_relation_size(c.oid)), 0)
FROM pg_class AS c WHERE c.oid IN (SELECT relid FROM leaves)
"""
_INDEX_SIZES = """
WITH leaves AS (
    SELECT relid FROM pg_partition_tree('chunks'::regclass) WHERE isleaf
    UNION SELECT oid FROM pg_class WHERE oid = 'chunks'::regclass AND relkind = 'r'
)
SELECT am.amname, count(*), sum(pg_relation_size(i.indexrelid))
FROM pg_index AS i
JOIN pg_class AS c ON c.oid = i.indexrelid
JOIN pg_am AS am ON am.oid = c.relam
WHERE i.indrelid IN (SELECT relid FROM leaves)
GROUP BY am.amname ORDER BY am.amname
"""


async def rebalance_tenants(
    store: Store, tenants: Collection[str], min_chunks: int, exact_search_max_chunks: int
) -> dict[str, Any]:
    """Run the shipped rebalance over the benchmark's tenants; its timing and what it moved."""
    started = time.perf_counter()
    report = await rebalance(
        store,
        min_chunks=min_chunks,
        exact_search_max_chunks=exact_search_max_chunks,
        tenants=tenants,
        dry_run=False,
    )
    return {
        "rebalance_seconds": round(time.perf_counter() - started, 2),
        "rebalance": {
            "min_chunks": min_chunks,
            "promoted": len(report.promoted),
            "demoted": len(report.demoted),
            "unchanged": report.unchanged,
        },
    }


async def own_partition_tenants(store: Store) -> frozenset[str]:
    """Tenants with a partition (and an HNSW index) of their own; the service scans every other
    tenant exactly, whatever its size (rag/service.py)."""
    async with store.pool.connection() as conn:
        cur = await conn.execute("SELECT tenant_id FROM tenant_partitions")
        return frozenset(str(row[0]) for row in await cur.fetchall())


def service_scans_exactly(tenant: str, chunks: int, *, own: frozenset[str], exact_max: int) -> bool:
    """The path ``RagService`` picks: exact unless the tenant has its own partition and more
    than ``exact_max`` chunks."""
    return tenant not in own or chunks <= exact_max


async def chunk_storage(store: Store, chunks: int) -> dict[str, Any]:
    """``chunks`` on disk summed over its partitions: table, TOAST, each index kind; and the
    bytes per million chunks against the issue's target."""
    async with store.pool.connection() as conn:
        cur = await conn.execute(_TABLE_SIZES)
        row = await cur.fetchone()
        assert row is not None
        partitions, table, toast, total = (int(value) for value in row)
        cur = await conn.execute(_INDEX_SIZES)
        indexes = {str(kind): (int(count), int(size)) for kind, count, size in await cur.fetchall()}
        cur = await conn.execute("SELECT pg_total_relation_size('documents')")
        documents = await cur.fetchone()
    per_million = round(total * 1_000_000 / chunks) if chunks else None
    return {
        "partitions": partitions,
        "chunks_table_bytes": table - toast,
        "chunks_toast_bytes": toast,
        "index_bytes": {kind: size for kind, (_, size) in indexes.items()},
        "index_count": {kind: count for kind, (count, _) in indexes.items()},
        "chunks_total_bytes": total,
        "documents_total_bytes": int(documents[0]) if documents else None,
        "bytes_per_million_chunks": per_million,
        "target_bytes_per_million_chunks": int(TARGET_BYTES_PER_MILLION),
        "meets_target": per_million is not None and per_million <= TARGET_BYTES_PER_MILLION,
    }
