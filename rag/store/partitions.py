"""Tenant partitions of ``chunks``: which tenants get a partition of their own, and moving them.

A tenant with more current chunks than ``min_chunks`` moves from the shared hash partitions into
a LIST partition of its own, with its own GIN, and its own HNSW once it has more chunks than an
exact scan handles (``exact_search_max_chunks``: below that, retrieval scans the partition exactly
and a graph would only cost memory); one that fell below ``min_chunks / 2`` (hysteresis, so a
tenant near the line does not bounce) moves back. Layout: 011_partitioned_chunks.
"""

from __future__ import annotations

import hashlib
import logging
import re
import time
from collections.abc import Collection
from dataclasses import dataclass

from psycopg import sql

from rag.errors import ConfigurationError
from rag.store.connection import SHARED_PARTITION, Store, vector_index_statement
from rag.store.tenant_locks import hold_tenant_locks

__all__ = ["RebalanceReport", "TenantPlacement", "rebalance", "rebalance_due", "tenant_placements"]

logger = logging.getLogger(__name__)

# One rebalance at a time (one-key advisory lock space; ingest locks use the two-key space).
_REBALANCE_LOCK_ID = 7_310_442_118_311

# The switch takes the parent first, as every query does (parent, then the partitions it
# prunes to); taking a partition first deadlocks against a reader that holds the parent. Queries
# wait for the switch (milliseconds, plus ATTACH's scan of the shared partitions), never fail.
_LOCK_CHUNKS = "LOCK TABLE ONLY chunks IN ACCESS EXCLUSIVE MODE"

_PLACEMENTS = """
SELECT t.tenant_id, coalesce(s.chunks, 0), p.table_name
FROM tenants AS t
LEFT JOIN tenant_text_stats AS s USING (tenant_id)
LEFT JOIN tenant_partitions AS p USING (tenant_id)
WHERE %(tenants)s::text[] IS NULL OR t.tenant_id = ANY(%(tenants)s::text[])
ORDER BY t.tenant_id
"""


@dataclass(frozen=True)
class RebalanceReport:
    promoted: tuple[str, ...]
    demoted: tuple[str, ...]
    unchanged: int
    seconds: float


@dataclass(frozen=True)
class TenantPlacement:
    """A tenant's current chunks and its own partition's table (None: the shared partitions)."""

    tenant: str
    chunks: int
    table: str | None

    def promote(self, min_chunks: int) -> bool:
        return self.table is None and self.chunks > min_chunks

    def demote(self, min_chunks: int) -> bool:
        return self.table is not None and self.chunks * 2 < min_chunks


async def tenant_placements(
    store: Store, tenants: Collection[str] | None = None
) -> list[TenantPlacement]:
    """Every tenant (or those named) with its size and partition; an unknown name is an error."""
    wanted = sorted(set(tenants)) if tenants is not None else None
    async with store.pool.connection() as conn:
        cur = await conn.execute(_PLACEMENTS, {"tenants": wanted})
        found = [TenantPlacement(t, int(n), table) for t, n, table in await cur.fetchall()]
    missing = sorted(set(wanted or ()) - {p.tenant for p in found})
    if missing:
        raise ConfigurationError(f"no such tenant: {', '.join(missing)}")
    return found


async def rebalance_due(store: Store, *, min_chunks: int, tenants: Collection[str]) -> list[str]:
    """The tenants among ``tenants`` that a rebalance with ``min_chunks`` would move."""
    return [
        p.tenant
        for p in await tenant_placements(store, tenants)
        if p.promote(min_chunks) or p.demote(min_chunks)
    ]


async def rebalance(
    store: Store,
    *,
    min_chunks: int,
    exact_search_max_chunks: int,
    tenants: Collection[str] | None = None,
    dry_run: bool = False,
) -> RebalanceReport:
    """Move tenants across the partition threshold (all tenants, or those named).

    Online: the copy and the index builds run before a short switch transaction, while the
    tenant's ingest lock keeps its rows still; readers see the old rows until the switch commits.
    """
    if min_chunks < 1:
        raise ConfigurationError(f"min_chunks must be at least 1, not {min_chunks}")
    started = time.perf_counter()
    lock_conn = await store.connect_outside_pool()
    async with lock_conn, lock_conn.transaction():
        await lock_conn.execute("SELECT pg_advisory_xact_lock(%s)", (_REBALANCE_LOCK_ID,))
        placements = await tenant_placements(store, tenants)
        promoted = [p for p in placements if p.promote(min_chunks)]
        demoted = [p for p in placements if p.demote(min_chunks)]
        if not dry_run:
            for placement in promoted:
                walked = placement.chunks > exact_search_max_chunks
                await _promote(store, placement.tenant, with_graph=walked)
            for placement in demoted:
                assert placement.table is not None
                await _demote(store, placement.tenant, placement.table)
    return RebalanceReport(
        promoted=tuple(p.tenant for p in promoted),
        demoted=tuple(p.tenant for p in demoted),
        unchanged=len(placements) - len(promoted) - len(demoted),
        seconds=time.perf_counter() - started,
    )


def partition_table_name(tenant: str) -> str:
    """``chunks_t_<readable part>_<hash>``: tenant ids differ in case and punctuation only too."""
    readable = re.sub(r"[^a-z0-9_]", "_", tenant.lower())[:32]
    digest = hashlib.sha256(tenant.encode()).hexdigest()[:8]
    return f"chunks_t_{readable}_{digest}"


async def _promote(store: Store, tenant: str, *, with_graph: bool) -> None:
    table = partition_table_name(tenant)
    names = {"t": sql.Identifier(table), "tenant": sql.Literal(tenant)}
    params = {"tenant": tenant, "table": table}
    async with hold_tenant_locks(store, [tenant]), store.pool.connection() as conn:
        started = time.perf_counter()
        # A table left by an interrupted run is rebuilt from scratch.
        await conn.execute(sql.SQL("DROP TABLE IF EXISTS {t}").format(**names))
        for statement in _BUILD_PARTITION:
            await conn.execute(sql.SQL(statement).format(**names), params)
        if with_graph:
            cur = await conn.execute(
                sql.SQL("SELECT DISTINCT embedding_dim FROM {t} ORDER BY 1").format(**names)
            )
            for (dim,) in await cur.fetchall():
                await conn.execute(vector_index_statement(table, int(dim)))
        await conn.execute(sql.SQL("ANALYZE {t}").format(**names))
        built = time.perf_counter() - started
        async with conn.transaction():
            await conn.execute(_LOCK_CHUNKS)
            # Rows leave the shared partition by a statement on it, not on `chunks`: no
            # term_stats trigger fires, and the same rows arrive in the new partition.
            await conn.execute(
                sql.SQL("DELETE FROM {shared} WHERE tenant_id = %(tenant)s").format(
                    shared=sql.Identifier(SHARED_PARTITION)
                ),
                params,
            )
            await conn.execute(
                sql.SQL("ALTER TABLE chunks ATTACH PARTITION {t} FOR VALUES IN ({tenant})").format(
                    **names
                )
            )
            await conn.execute(
                "INSERT INTO tenant_partitions (tenant_id, table_name) "
                "VALUES (%(tenant)s, %(table)s)",
                params,
            )
    logger.info(
        "tenant %s moved to partition %s (copy and indexes %.1fs, switch %.1fs)",
        tenant,
        table,
        built,
        time.perf_counter() - started - built,
    )


async def _demote(store: Store, tenant: str, table: str) -> None:
    names = {"t": sql.Identifier(table), "shared": sql.Identifier(SHARED_PARTITION)}
    async with (
        hold_tenant_locks(store, [tenant]),
        store.pool.connection() as conn,
        conn.transaction(),
    ):
        # A small tenant (below half the threshold): one short transaction moves it back.
        await conn.execute(_LOCK_CHUNKS)
        await conn.execute(sql.SQL("ALTER TABLE chunks DETACH PARTITION {t}").format(**names))
        await conn.execute(sql.SQL("INSERT INTO {shared} SELECT * FROM {t}").format(**names))
        await conn.execute("DELETE FROM tenant_partitions WHERE tenant_id = %s", (tenant,))
        await conn.execute(sql.SQL("DROP TABLE {t}").format(**names))
    logger.info("tenant %s moved back to the shared partitions", tenant)


# The new partition, built while it is still a table of its own: the same columns, checks and
# storage as `chunks`, then its rows, then indexes and a foreign key equivalent to the parent's,
# which ATTACH adopts instead of building or validating them under its lock. The CHECK on the
# tenant spares ATTACH the scan of the new table.
_BUILD_PARTITION = (
    "CREATE TABLE {t} (LIKE chunks INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING STORAGE)",
    "ALTER TABLE {t} ADD CHECK (tenant_id = {tenant})",
    "INSERT INTO {t} SELECT * FROM chunks WHERE tenant_id = %(tenant)s",
    "ALTER TABLE {t} ADD PRIMARY KEY (tenant_id, chunk_id)",
    "ALTER TABLE {t} ADD FOREIGN KEY (tenant_id, document_id, version)"
    " REFERENCES documents (tenant_id, document_id, version) ON DELETE CASCADE",
    "CREATE INDEX ON {t} (tenant_id, document_id, version)",
    "CREATE INDEX ON {t} USING gin (tsv)",
    "CREATE INDEX ON {t} (tenant_id, service) WHERE NOT superseded",
)
