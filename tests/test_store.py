from __future__ import annotations

import asyncio
import shutil
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import psycopg
import pytest
import pytest_asyncio
from psycopg import sql

from rag import Settings, Store
from rag.store.connection import start_embedded_server
from rag.store.embedded_server import stop_embedded_server
from rag.store.migrations import apply_migrations, load_migrations


@pytest_asyncio.fixture(loop_scope="session")
async def fresh_database(store: Store, database_url: str) -> AsyncIterator[str]:
    name = f"migrate_{uuid.uuid4().hex[:10]}"
    async with store.pool.connection() as conn:
        await conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    yield database_url.replace("/postgres?", f"/{name}?")
    async with store.pool.connection() as conn:
        await conn.execute(sql.SQL("DROP DATABASE {} WITH (FORCE)").format(sql.Identifier(name)))


async def test_migrations_apply_once_and_a_second_run_is_a_no_op(fresh_database: str) -> None:
    versions = [m.version for m in load_migrations()]
    async with await psycopg.AsyncConnection.connect(fresh_database) as conn:
        assert await apply_migrations(conn) == versions
        assert await apply_migrations(conn) == []
        cur = await conn.execute("SELECT version FROM schema_migrations ORDER BY version")
        assert [row[0] for row in await cur.fetchall()] == versions


async def test_concurrent_migrations_apply_each_version_exactly_once(fresh_database: str) -> None:
    async def migrate() -> list[int]:
        async with await psycopg.AsyncConnection.connect(fresh_database) as conn:
            return await apply_migrations(conn)

    first, second = await asyncio.gather(migrate(), migrate())
    assert sorted(first + second) == [m.version for m in load_migrations()]
    assert not set(first) & set(second)


async def test_store_uses_database_url_and_checks_health(store: Store) -> None:
    await store.check()
    async with store.pool.connection() as conn:
        cur = await conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
        row = await cur.fetchone()
    assert row is not None and str(row[0]).startswith("0.8")


async def test_embedded_server_starts_when_database_url_is_unset(test_root: Path) -> None:
    data_dir = test_root / f"embedded-{uuid.uuid4().hex[:8]}"
    settings = Settings(_env_file=None, data_dir=data_dir)  # type: ignore[call-arg]
    opened = await Store.open(settings)
    try:
        await opened.check()
        # A second command reuses the running server instead of starting another.
        assert await asyncio.to_thread(
            start_embedded_server, settings.pgdata
        ) == await asyncio.to_thread(start_embedded_server, settings.pgdata)
    finally:
        await opened.close()
        # Not get_server(...).cleanup(): that returns the handle start_embedded_server made,
        # whose cleanup mode leaves the server running (as the CLI wants).
        await asyncio.to_thread(stop_embedded_server, settings.pgdata)
        shutil.rmtree(data_dir, ignore_errors=True)


async def test_unreachable_database_is_a_clear_store_error(tmp_path: Path) -> None:
    from rag import StoreError

    settings = Settings(  # type: ignore[call-arg]
        _env_file=None, data_dir=tmp_path, DATABASE_URL="postgresql://u:hunter2@127.0.0.1:1/x"
    )
    with pytest.raises(StoreError) as caught:
        await Store.open(settings)
    assert "hunter2" not in str(caught.value)
