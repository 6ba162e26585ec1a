"""The synthetic corpus in Postgres: COPY into the real schema, the HNSW build, and a database
of the benchmark's own that is reused while its spec is unchanged."""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from importlib import resources
from typing import Any

import psycopg
from psycopg import sql
from psycopg.conninfo import make_conninfo
from psycopg.rows import TupleRow
from psycopg_pool import AsyncConnectionPool
from pydantic import SecretStr

from bench.store_layout import rebalance_tenants
from bench.synthetic import SyntheticCorpus, SyntheticSpec, TenantRows, document_sha
from rag import SHARED_PARTITION, Settings, Store, open_store

_STAGING = """
CREATE TEMP TABLE IF NOT EXISTS bench_staging (
    tenant_id text, document_id text, ordinal integer, heading_path text[], content text,
    service text, embedding vector, title text
)
"""
# The same lexemes as ingestion (rag/ingest/write.py): all of them, and the title's and headings'.
_FROM_STAGING = """
INSERT INTO chunks (tenant_id, document_id, version, ordinal, heading_path, content, superseded,
                    service, embedding, embedding_model, embedding_dim, tsv, heading_tsv)
SELECT tenant_id, document_id, 1, ordinal, heading_path, content, false, service, embedding,
       %(model)s, %(dim)s,
       strip(to_tsvector('english', title)
             || to_tsvector('english', array_to_string(heading_path, ' '))
             || to_tsvector('english', content)),
       strip(to_tsvector('english', title)
             || to_tsvector('english', array_to_string(heading_path, ' ')))
FROM bench_staging
"""
_SECONDARY_INDEXES = """
SELECT c.relname, pg_get_indexdef(i.indexrelid)
FROM pg_index AS i JOIN pg_class AS c ON c.oid = i.indexrelid
WHERE i.indrelid = 'chunks'::regclass AND NOT i.indisprimary
"""
_FLUSH_ROWS = 50_000


async def load_corpus(
    store: Store,
    corpus: SyntheticCorpus,
    *,
    conninfo: str,
    bulk: bool,
    partition_min_chunks: int | None = None,
    exact_search_max_chunks: int,
) -> dict[str, Any]:
    """COPY every tenant into the real schema, rebalance the tenants across partitions, build
    the HNSW index, VACUUM ANALYZE; timings.

    ``bulk`` drops the secondary indexes of ``chunks`` for the load and rebuilds them from their
    own catalogue definitions afterwards: only for a database the benchmark owns.
    """
    spec = corpus.spec
    timings: dict[str, float] = {"generate_seconds": 0.0}
    started = time.perf_counter()
    async with store.pool.connection() as conn:
        async with conn.cursor() as cur:
            async with cur.copy("COPY tenants (tenant_id) FROM STDIN") as copy:
                for rank in range(spec.tenants):
                    await copy.write_row((spec.tenant_id(rank),))
        dropped: list[tuple[str, str]] = []
        if bulk:
            cur = await conn.execute(_SECONDARY_INDEXES)
            dropped = [(name, definition) for name, definition in await cur.fetchall()]
            for name, _ in dropped:
                await conn.execute(sql.SQL("DROP INDEX {}").format(sql.Identifier(name)))
        await conn.execute(_STAGING)
        staged = 0
        for rank in range(spec.tenants):
            generating = time.perf_counter()
            rows = await asyncio.to_thread(corpus.tenant_rows, rank)
            timings["generate_seconds"] += time.perf_counter() - generating
            await _copy_tenant(conn, rows, spec)
            staged += len(rows.chunks)
            if staged >= _FLUSH_ROWS or rank == spec.tenants - 1:
                await conn.execute(_FROM_STAGING, {"model": spec.embedding_model, "dim": spec.dim})
                await conn.execute("TRUNCATE bench_staging")
                staged = 0
        await conn.execute("DROP TABLE bench_staging")
        timings["copy_seconds"] = time.perf_counter() - started - timings["generate_seconds"]
        if dropped:
            indexing = time.perf_counter()
            await conn.execute("SET maintenance_work_mem = '1GB'")
            for _, definition in dropped:
                # The catalogue's own CREATE INDEX text; on a partitioned table it reads "ON ONLY
                # chunks", which would leave the partitions without the index.
                await conn.execute(definition.replace(" ON ONLY ", " ON ", 1))
            await conn.execute("RESET maintenance_work_mem")
            timings["secondary_index_seconds"] = time.perf_counter() - indexing
    # As `runbook db rebalance` after onboarding: tenants above the threshold get partitions of
    # their own (with their own HNSW). None: leave every tenant in the shared partitions.
    moved = (
        {}
        if partition_min_chunks is None
        else await rebalance_tenants(
            store,
            [spec.tenant_id(rank) for rank in range(spec.tenants)],
            partition_min_chunks,
            exact_search_max_chunks,
        )
    )
    if moved and moved["rebalance"]["promoted"]:
        # The rows that moved left free space in the shared buckets, which later ingests would
        # reuse; compacted so that the storage figure is the steady state, not the move's leftover.
        compacting = time.perf_counter()
        async with store.pool.connection() as conn:
            await conn.execute(sql.SQL("VACUUM FULL {}").format(sql.Identifier(SHARED_PARTITION)))
        timings["compact_shared_seconds"] = time.perf_counter() - compacting
    timings["hnsw_build_seconds"] = await build_vector_index(
        conninfo, spec.dim, exact_search_max_chunks=exact_search_max_chunks
    )
    analysing = time.perf_counter()
    async with store.pool.connection() as conn:
        await conn.execute("VACUUM (ANALYZE) documents")
        await conn.execute("VACUUM (ANALYZE) chunks")
    timings["vacuum_analyze_seconds"] = time.perf_counter() - analysing
    return {**{name: round(value, 2) for name, value in timings.items()}, **moved}


async def _copy_tenant(
    conn: psycopg.AsyncConnection[TupleRow], rows: TenantRows, spec: SyntheticSpec
) -> None:
    async with conn.cursor() as cur:
        async with cur.copy(
            "COPY documents (tenant_id, document_id, version, sha256, source_path, title, "
            "service, embedding_model) FROM STDIN"
        ) as copy:
            for document_id, title, service in rows.documents:
                sha = document_sha(rows.tenant, document_id)
                await copy.write_row(
                    (rows.tenant, document_id, 1, sha, f"{document_id}.md", title, service,
                     spec.embedding_model)
                )  # fmt: skip
        async with cur.copy(
            "COPY bench_staging (tenant_id, document_id, ordinal, heading_path, content, service, "
            "embedding, title) FROM STDIN (FORMAT BINARY)"
        ) as copy:
            copy.set_types(["text", "text", "int4", "text[]", "text", "text", "vector", "text"])
            for (document_id, ordinal, path, text, service, title), vector in zip(
                rows.chunks, rows.vectors, strict=True
            ):
                await copy.write_row(
                    (rows.tenant, document_id, ordinal, path, text, service, vector, title)
                )


async def build_vector_index(
    conninfo: str, dim: int, *, exact_search_max_chunks: int, memory: str = "4GB"
) -> float:
    """``Store.ensure_vector_index`` on a connection of its own with a larger build memory."""
    pool: AsyncConnectionPool[psycopg.AsyncConnection[TupleRow]] = AsyncConnectionPool(
        conninfo,
        min_size=1,
        max_size=1,
        kwargs={"options": f"-c maintenance_work_mem={memory}", "autocommit": True},
        open=False,
    )
    await pool.open(wait=True, timeout=30)
    try:
        started = time.perf_counter()
        await Store(pool).ensure_vector_index(dim, exact_search_max_chunks=exact_search_max_chunks)
        return round(time.perf_counter() - started, 2)
    finally:
        await pool.close()


# --- A database of the benchmark's own ------------------------------------------------------


@dataclass(frozen=True)
class LoadedStore:
    """The benchmark's own store, open, with what it was loaded from and how the load went."""

    store: Store
    fingerprint: dict[str, Any]
    load: dict[str, Any]
    reused: bool


@asynccontextmanager
async def loaded_store(
    settings: Settings,
    base_url: str,
    database: str,
    corpus: SyntheticCorpus,
    *,
    rebuild: bool,
) -> AsyncIterator[LoadedStore]:
    """Open ``database`` with ``corpus`` loaded the way ``settings`` lay it out: reused when a
    previous load had the same fingerprint, loaded (and marked) otherwise."""
    fingerprint = store_fingerprint(
        corpus.spec,
        partition_min_chunks=settings.partition_min_chunks,
        exact_search_max_chunks=settings.exact_search_max_chunks,
    )
    conninfo, marker = await prepare_database(base_url, database, fingerprint, rebuild=rebuild)
    async with open_store(
        settings.model_copy(update={"database_url": SecretStr(conninfo)})
    ) as store:
        if marker is None:
            load = await load_corpus(
                store,
                corpus,
                conninfo=conninfo,
                bulk=True,
                partition_min_chunks=settings.partition_min_chunks,
                exact_search_max_chunks=settings.exact_search_max_chunks,
            )
            await mark_database(base_url, database, {"spec": fingerprint, "load": load})
        else:
            load = marker["load"]
        yield LoadedStore(store, fingerprint, load, reused=marker is not None)


async def prepare_database(
    base_url: str, name: str, fingerprint: dict[str, Any], *, rebuild: bool
) -> tuple[str, dict[str, Any] | None]:
    """The conninfo of database ``name`` and, if it already holds this corpus, its load marker.

    The marker is the database's comment, written by ``mark_database`` once a load completed;
    any other content (or ``rebuild``) drops and recreates the database.
    """
    conninfo = make_conninfo(base_url, dbname=name)
    async with await psycopg.AsyncConnection.connect(base_url, autocommit=True) as conn:
        cur = await conn.execute(
            "SELECT shobj_description(oid, 'pg_database') FROM pg_database WHERE datname = %s",
            (name,),
        )
        row = await cur.fetchone()
        if row is not None:
            marker = json.loads(row[0]) if row[0] else {}
            if not rebuild and marker.get("spec") == fingerprint:
                return conninfo, marker
            await conn.execute(
                sql.SQL("DROP DATABASE {} WITH (FORCE)").format(sql.Identifier(name))
            )
        await conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    return conninfo, None


async def mark_database(base_url: str, name: str, marker: dict[str, Any]) -> None:
    async with await psycopg.AsyncConnection.connect(base_url, autocommit=True) as conn:
        await conn.execute(
            sql.SQL("COMMENT ON DATABASE {} IS {}").format(
                sql.Identifier(name), sql.Literal(json.dumps(marker))
            )
        )


def store_fingerprint(
    spec: SyntheticSpec, *, partition_min_chunks: int, exact_search_max_chunks: int
) -> dict[str, Any]:
    """What a loaded store of ours depends on: the corpus, the rebalance threshold, which
    partitions get a graph, and the schema (every migration's text), so a store loaded before a
    migration changed is loaded again."""
    digest = hashlib.sha256()
    for entry in sorted(
        resources.files("rag.store").joinpath("sql").iterdir(), key=lambda e: e.name
    ):
        if entry.name.endswith(".sql"):
            digest.update(entry.name.encode() + b"\0" + entry.read_bytes())
    return {
        **spec.as_json(),
        "partition_min_chunks": partition_min_chunks,
        "exact_search_max_chunks": exact_search_max_chunks,
        "schema_sha256": digest.hexdigest()[:16],
    }


def size_label(count: int) -> str:
    """``1000000`` → ``1m``, ``100000`` → ``100k``, ``2500`` → ``2500``."""
    for unit, suffix in ((1_000_000, "m"), (1_000, "k")):
        if count % unit == 0:
            return f"{count // unit}{suffix}"
    return str(count)
