"""Versioned SQL migrations from ``rag/store/sql/NNN_name.sql``, applied once each, under a lock."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from importlib import resources

import psycopg
from psycopg.rows import TupleRow

logger = logging.getLogger(__name__)

# Any fixed 64-bit number; every process that migrates takes the same one.
_MIGRATION_LOCK_ID = 7_310_442_118_304

_CREATE_TABLE = """
CREATE TABLE IF NOT EXISTS schema_migrations (
    version    integer PRIMARY KEY,
    name       text NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now()
)
"""


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    sql: str


def load_migrations() -> list[Migration]:
    found = []
    for entry in resources.files("rag.store").joinpath("sql").iterdir():
        stem, _, suffix = entry.name.partition(".")
        if suffix != "sql":
            continue
        number, _, name = stem.partition("_")
        found.append(Migration(int(number), name, entry.read_text(encoding="utf-8")))
    return sorted(found, key=lambda m: m.version)


async def apply_migrations(conn: psycopg.AsyncConnection[TupleRow]) -> list[int]:
    """Apply the pending migrations; return the versions applied by this call.

    The advisory lock serialises concurrent starters: the second waits, then finds nothing to do.
    """
    applied_now: list[int] = []
    await conn.set_autocommit(True)
    await conn.execute("SELECT pg_advisory_lock(%s)", (_MIGRATION_LOCK_ID,))
    try:
        await conn.execute(_CREATE_TABLE)
        cur = await conn.execute("SELECT version FROM schema_migrations")
        done = {row[0] for row in await cur.fetchall()}
        for migration in load_migrations():
            if migration.version in done:
                continue
            async with conn.transaction():
                await conn.execute(migration.sql.encode())
                await conn.execute(
                    "INSERT INTO schema_migrations (version, name) VALUES (%s, %s)",
                    (migration.version, migration.name),
                )
            logger.info("applied migration %03d_%s", migration.version, migration.name)
            applied_now.append(migration.version)
    finally:
        await conn.execute("SELECT pg_advisory_unlock(%s)", (_MIGRATION_LOCK_ID,))
    return applied_now
