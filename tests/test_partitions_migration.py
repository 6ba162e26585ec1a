"""Migrations 011 and 012 convert an installation, with its chunks, in place."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import psycopg
import pytest_asyncio
from psycopg.conninfo import make_conninfo
from psycopg.rows import TupleRow

from rag.store.migrations import apply_migrations, load_migrations

SCHEMA_MIGRATIONS = """
CREATE TABLE schema_migrations (
    version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now()
)
"""

INSERT_CHUNK = """
INSERT INTO chunks (tenant_id, document_id, version, ordinal, heading_path, content, superseded,
                    embedding, embedding_model, embedding_dim, tsv)
VALUES ('acme', 'db/failover', %(version)s, %(ordinal)s, '{Failover}', %(content)s,
        %(superseded)s, %(embedding)s::vector, 'test-model', 3, to_tsvector('english', %(content)s))
RETURNING chunk_id
"""


# After 012 a chunk also carries the lexemes of its title and headings.
INSERT_CHUNK_NOW = """
INSERT INTO chunks (tenant_id, document_id, version, ordinal, heading_path, content, superseded,
                    embedding, embedding_model, embedding_dim, tsv, heading_tsv)
VALUES ('acme', 'db/failover', %(version)s, %(ordinal)s, '{Failover}', %(content)s,
        %(superseded)s, %(embedding)s::vector, 'test-model', 3,
        strip(to_tsvector('english', %(content)s)), ''::tsvector)
RETURNING chunk_id
"""


@asynccontextmanager
async def database_at(
    database_url: str, last: int
) -> AsyncIterator[psycopg.AsyncConnection[TupleRow]]:
    """A database of its own with migrations 001–``last`` applied, dropped afterwards."""
    name = f"migration_{uuid.uuid4().hex[:8]}"
    async with await psycopg.AsyncConnection.connect(database_url, autocommit=True) as admin:
        await admin.execute(f'CREATE DATABASE "{name}"')
        try:
            conn = await psycopg.AsyncConnection.connect(
                make_conninfo(database_url, dbname=name), autocommit=True
            )
            async with conn:
                await conn.execute(SCHEMA_MIGRATIONS)
                for migration in load_migrations():
                    if migration.version <= last:
                        await conn.execute(migration.sql.encode())
                        await conn.execute(
                            "INSERT INTO schema_migrations (version, name) VALUES (%s, %s)",
                            (migration.version, migration.name),
                        )
                yield conn
        finally:
            await admin.execute(f'DROP DATABASE "{name}" WITH (FORCE)')


@pytest_asyncio.fixture(loop_scope="session")
async def database_at_010(database_url: str) -> AsyncIterator[psycopg.AsyncConnection[TupleRow]]:
    async with database_at(database_url, 10) as conn:
        yield conn


@pytest_asyncio.fixture(loop_scope="session")
async def database_at_011(database_url: str) -> AsyncIterator[psycopg.AsyncConnection[TupleRow]]:
    async with database_at(database_url, 11) as conn:
        yield conn


async def _add_document(
    conn: psycopg.AsyncConnection[TupleRow], version: int, superseded: bool
) -> None:
    await conn.execute(
        "INSERT INTO documents (tenant_id, document_id, version, sha256, source_path, title,"
        " superseded, embedding_model) VALUES ('acme', 'db/failover', %s, 'x', 'f.md',"
        " 'Failover', %s, 'test-model')",
        (version, superseded),
    )


async def test_migration_011_partitions_chunks_in_place_keeping_ids_vectors_and_stats(
    database_at_010: psycopg.AsyncConnection[TupleRow],
) -> None:
    conn = database_at_010
    await conn.execute("INSERT INTO tenants (tenant_id) VALUES ('acme')")
    for version, superseded in ((1, True), (2, False)):
        await _add_document(conn, version, superseded)
    rows = [
        (1, 0, "promote the replica with patronictl", True, "[1,0,0]"),
        (2, 0, "promote the healthiest replica", False, "[0.5,0.25,0.125]"),
        (2, 1, "confirm the new leader accepts writes", False, "[0,1,0]"),
    ]
    ids = []
    for version, ordinal, content, superseded, embedding in rows:
        cur = await conn.execute(
            INSERT_CHUNK,
            {
                "version": version,
                "ordinal": ordinal,
                "content": content,
                "superseded": superseded,
                "embedding": embedding,
            },
        )
        row = await cur.fetchone()
        assert row is not None
        ids.append(row[0])
    stats_query = "SELECT lexeme, df FROM term_stats WHERE df > 0 ORDER BY lexeme"
    stats_before = await (await conn.execute(stats_query)).fetchall()

    assert (await apply_migrations(conn))[0] == 11

    cur = await conn.execute(
        "SELECT chunk_id, pg_typeof(embedding)::text, embedding::text FROM chunks ORDER BY chunk_id"
    )
    migrated = await cur.fetchall()
    assert [r[0] for r in migrated] == ids
    assert {r[1] for r in migrated} == {"halfvec"}
    assert [r[2] for r in migrated] == ["[1,0,0]", "[0.5,0.25,0.125]", "[0,1,0]"]
    cur = await conn.execute("SELECT relkind::text FROM pg_class WHERE relname = 'chunks'")
    assert await cur.fetchone() == ("p",)
    assert await (await conn.execute(stats_query)).fetchall() == stats_before
    cur = await conn.execute(
        INSERT_CHUNK_NOW,
        {
            "version": 2,
            "ordinal": 2,
            "content": "page the database owner",
            "superseded": False,
            "embedding": "[0,0,1]",
        },
    )
    row = await cur.fetchone()
    assert row is not None and row[0] > max(ids), "new chunk ids continue after the old ones"
    cur = await conn.execute("SELECT df FROM term_stats WHERE lexeme = 'owner'")
    assert await cur.fetchone() == (1,), "the statistics triggers work on the new table"


# The chunk tsvector ingestion wrote before 012: title A, headings B, body D, with positions.
INSERT_WEIGHTED_CHUNK = """
INSERT INTO chunks (tenant_id, document_id, version, ordinal, heading_path, content,
                    embedding, embedding_model, embedding_dim, tsv)
VALUES ('acme', 'db/failover', 1, %(ordinal)s, %(headings)s, %(content)s, '[1,0,0]',
        'test-model', 3,
        setweight(to_tsvector('english', 'Database failover'), 'A')
        || setweight(to_tsvector('english', array_to_string(%(headings)s::text[], ' ')), 'B')
        || setweight(to_tsvector('english', %(content)s), 'D'))
"""


async def test_migration_012_keeps_every_lexeme_and_moves_title_and_heading_ones_aside(
    database_at_011: psycopg.AsyncConnection[TupleRow],
) -> None:
    conn = database_at_011
    await conn.execute("INSERT INTO tenants (tenant_id) VALUES ('acme')")
    await _add_document(conn, 1, False)
    for ordinal, headings, content in (
        (0, ["Diagnosis"], "check replication lag on the replica"),
        (1, ["Mitigation", "Promote"], "promote the replica with patronictl"),
    ):
        await conn.execute(
            INSERT_WEIGHTED_CHUNK, {"ordinal": ordinal, "headings": headings, "content": content}
        )
    lexemes = "SELECT ordinal, tsvector_to_array(tsv), length(tsv) FROM chunks ORDER BY ordinal"
    before = await (await conn.execute(lexemes)).fetchall()
    stats_query = "SELECT lexeme, df FROM term_stats ORDER BY lexeme"
    stats_before = await (await conn.execute(stats_query)).fetchall()

    assert (await apply_migrations(conn))[0] == 12

    assert await (await conn.execute(lexemes)).fetchall() == before
    assert await (await conn.execute(stats_query)).fetchall() == stats_before
    cur = await conn.execute(
        "SELECT ordinal, tsvector_to_array(heading_tsv), tsv::text NOT LIKE '%:%'"
        " FROM chunks ORDER BY ordinal"
    )
    assert await cur.fetchall() == [
        (0, ["databas", "diagnosi", "failov"], True),
        (1, ["databas", "failov", "mitig", "promot"], True),
    ]
