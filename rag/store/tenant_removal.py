"""Deleting a tenant and everything it owns: runbooks, chunks (and its own partition), sources,
answers, settings, traces, jobs.

Every table with a ``tenant_id`` column is found in the catalog, so a table added later is
not forgotten; the chunks go first, by a statement on ``chunks`` so the keyword statistics
triggers see them leave, and an own partition is dropped. Held under the tenant's ingest lock:
no sync or ingest writes half a tenant back in.
"""

from __future__ import annotations

import logging

from psycopg import sql

from rag.store.connection import Store
from rag.store.tenant_locks import hold_tenant_locks

__all__ = ["delete_tenant"]

logger = logging.getLogger(__name__)

# Ordinary tables (not partitions, not views) with a tenant_id column; the parent `chunks`
# stands for its partitions, `tenants` goes last.
_TENANT_TABLES = """
SELECT c.relname
FROM pg_attribute AS a
JOIN pg_class AS c ON c.oid = a.attrelid
JOIN pg_namespace AS n ON n.oid = c.relnamespace
WHERE a.attname = 'tenant_id' AND NOT a.attisdropped AND n.nspname = current_schema()
  AND c.relkind IN ('r', 'p') AND NOT c.relispartition
  AND c.relname NOT IN ('tenants', 'chunks', 'documents', 'tenant_partitions')
ORDER BY c.relname
"""


async def delete_tenant(store: Store, tenant: str) -> bool:
    """Delete ``tenant`` and all its rows; False when there was no such tenant."""
    async with hold_tenant_locks(store, [tenant]), store.pool.connection() as conn:
        async with conn.transaction():
            cur = await conn.execute(
                "SELECT 1 FROM tenants WHERE tenant_id = %s FOR UPDATE", (tenant,)
            )
            if await cur.fetchone() is None:
                return False
            await conn.execute("DELETE FROM chunks WHERE tenant_id = %s", (tenant,))
            await conn.execute("DELETE FROM documents WHERE tenant_id = %s", (tenant,))
            cur = await conn.execute(_TENANT_TABLES)
            for (table,) in await cur.fetchall():
                await conn.execute(
                    sql.SQL("DELETE FROM {} WHERE tenant_id = %s").format(sql.Identifier(table)),
                    (tenant,),
                )
            cur = await conn.execute(
                "DELETE FROM tenant_partitions WHERE tenant_id = %s RETURNING table_name",
                (tenant,),
            )
            own = await cur.fetchone()
            if own is not None:
                # Dropping a partition detaches it; it is empty by now.
                await conn.execute(sql.SQL("DROP TABLE {}").format(sql.Identifier(str(own[0]))))
            await conn.execute("DELETE FROM tenants WHERE tenant_id = %s", (tenant,))
    logger.info("tenant %s deleted", tenant)
    return True
