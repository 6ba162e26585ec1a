"""Tenant partitions of ``chunks``: rebalance moves, statistics, row-level security, reads."""

from __future__ import annotations

import asyncio
import os
import sys
from dataclasses import replace
from pathlib import Path

import psycopg
import pytest
from psycopg import sql

from rag import (
    ConfigurationError,
    IngestLimits,
    Settings,
    Store,
    ingest_limits,
    ingest_path,
    rebalance,
)
from rag.retrieval.catalog import CatalogCache
from rag.retrieval.retrieve import Candidates, ScopeHints, search
from tests.hash_embedder import HashEmbedder

EMBEDDER = HashEmbedder(dim=16)
REPO = Path(__file__).resolve().parents[1]

# term_stats and tenant_text_stats rows that differ from a recount over the tenant's chunks.
STATS_DRIFT = """
SELECT
  (SELECT count(*) FROM (
     (SELECT lexeme, count(*)::int FROM chunks, unnest(tsvector_to_array(tsv)) AS l(lexeme)
      WHERE tenant_id = %(t)s AND NOT superseded GROUP BY lexeme
      EXCEPT SELECT lexeme, df FROM term_stats WHERE tenant_id = %(t)s AND df > 0)
     UNION ALL
     (SELECT lexeme, df FROM term_stats WHERE tenant_id = %(t)s AND df > 0
      EXCEPT SELECT lexeme, count(*)::int FROM chunks, unnest(tsvector_to_array(tsv)) AS l(lexeme)
      WHERE tenant_id = %(t)s AND NOT superseded GROUP BY lexeme)) AS terms),
  (SELECT count(*) FROM (
     SELECT count(*)::int, coalesce(sum(length(tsv)), 0) FROM chunks
     WHERE tenant_id = %(t)s AND NOT superseded
     EXCEPT SELECT chunks, total_length FROM tenant_text_stats WHERE tenant_id = %(t)s) AS totals)
"""


def write_runbooks(root: Path, count: int, *, revision: str = "") -> None:
    for n in range(count):
        path = root / f"svc{n}" / f"alert{n}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(
            f"# Alert {n} firing on service {n}\n\n## Diagnosis\nCheck the pods of service {n} "
            f"and the error rate {revision}.\n\n## Mitigation\nRoll back deploy {n} and scale "
            f"replicas of service {n}.\n",
            encoding="utf-8",
        )


@pytest.fixture
def limits(settings: Settings) -> IngestLimits:
    return ingest_limits(settings)


async def ingest(store: Store, root: Path, tenant: str, limits: IngestLimits) -> None:
    await ingest_path(store, EMBEDDER, root, tenant=tenant, prune=True, limits=limits)


async def stats_drift(store: Store, tenant: str) -> tuple[int, int]:
    async with store.pool.connection() as conn:
        cur = await conn.execute(STATS_DRIFT, {"t": tenant})
        row = await cur.fetchone()
    assert row is not None
    return int(row[0]), int(row[1])


async def own_partition(store: Store, tenant: str) -> str | None:
    async with store.pool.connection() as conn:
        cur = await conn.execute(
            "SELECT p.table_name FROM tenant_partitions AS p "
            "JOIN pg_inherits AS i ON i.inhrelid = p.table_name::regclass "
            "AND i.inhparent = 'chunks'::regclass WHERE p.tenant_id = %s",
            (tenant,),
        )
        row = await cur.fetchone()
    return None if row is None else str(row[0])


async def find(store: Store, tenant: str, *, exact: bool, candidates: int = 10) -> Candidates:
    question = "pods of service 3 error rate"
    return await search(
        store,
        tenant=tenant,
        question=question,
        embedding=(await EMBEDDER.embed([question]))[0],
        model=EMBEDDER.model_id,
        service=None,
        candidates=candidates,
        hints=ScopeHints(),
        exact=exact,
    )


async def test_rebalance_moves_a_tenant_into_its_own_partition_and_back_keeping_stats_exact(
    store: Store, limits: IngestLimits, unique_tenant: str, tmp_path: Path
) -> None:
    write_runbooks(tmp_path, 12)
    await ingest(store, tmp_path, unique_tenant, limits)
    write_runbooks(tmp_path, 6, revision="after the rollout")  # supersedes six documents
    await ingest(store, tmp_path, unique_tenant, limits)
    assert await stats_drift(store, unique_tenant) == (0, 0)
    before = await find(store, unique_tenant, exact=True)

    report = await rebalance(
        store, exact_search_max_chunks=0, min_chunks=10, tenants=[unique_tenant]
    )

    assert report.promoted == (unique_tenant,) and report.demoted == () and report.unchanged == 0
    table = await own_partition(store, unique_tenant)
    assert table is not None
    assert await stats_drift(store, unique_tenant) == (0, 0)
    after = await find(store, unique_tenant, exact=False)
    assert [e.chunk_id for e in after.evidence] == [e.chunk_id for e in before.evidence]
    catalog = await CatalogCache(store).catalog_for(unique_tenant)
    assert catalog.own_partition

    write_runbooks(tmp_path, 3, revision="once more")  # an ingest into the partition
    await ingest(store, tmp_path, unique_tenant, limits)
    assert await stats_drift(store, unique_tenant) == (0, 0)

    back = await rebalance(
        store, exact_search_max_chunks=0, min_chunks=10_000, tenants=[unique_tenant]
    )

    assert back.demoted == (unique_tenant,) and back.promoted == ()
    assert await own_partition(store, unique_tenant) is None
    assert await stats_drift(store, unique_tenant) == (0, 0)
    async with store.pool.connection() as conn:
        cur = await conn.execute("SELECT to_regclass(%s)", (table,))
        assert await cur.fetchone() == (None,)


async def test_hysteresis_keeps_a_tenant_between_half_and_the_threshold_where_it_is(
    store: Store, limits: IngestLimits, unique_tenant: str, tmp_path: Path
) -> None:
    write_runbooks(tmp_path, 6)
    await ingest(store, tmp_path, unique_tenant, limits)
    async with store.pool.connection() as conn:
        cur = await conn.execute(
            "SELECT chunks FROM tenant_text_stats WHERE tenant_id = %s", (unique_tenant,)
        )
        row = await cur.fetchone()
    assert row is not None
    size = int(row[0])
    await rebalance(store, exact_search_max_chunks=0, min_chunks=size - 1, tenants=[unique_tenant])

    stays = await rebalance(
        store, exact_search_max_chunks=0, min_chunks=size * 2 - 1, tenants=[unique_tenant]
    )
    dry = await rebalance(
        store, exact_search_max_chunks=0, min_chunks=size * 3, tenants=[unique_tenant], dry_run=True
    )

    assert stays.unchanged == 1 and stays.demoted == ()
    assert dry.demoted == (unique_tenant,)
    assert await own_partition(store, unique_tenant) is not None, "a dry run moves nothing"


async def test_a_reader_cannot_bypass_row_level_security_by_naming_a_partition(
    store: Store, limits: IngestLimits, unique_tenant: str, tmp_path: Path
) -> None:
    write_runbooks(tmp_path, 4)
    await ingest(store, tmp_path, unique_tenant, limits)
    await rebalance(store, exact_search_max_chunks=0, min_chunks=1, tenants=[unique_tenant])
    table = await own_partition(store, unique_tenant)
    assert table is not None

    for relation in (table, "chunks_shared", "chunks_shared_0"):
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            async with store.tenant_reader("another-tenant") as conn:
                await conn.execute(
                    sql.SQL("SELECT count(*) FROM {}").format(sql.Identifier(relation))
                )
    async with store.tenant_reader("another-tenant") as conn:
        cur = await conn.execute(
            "SELECT count(*) FROM chunks WHERE tenant_id = %s", (unique_tenant,)
        )
        assert await cur.fetchone() == (0,)
    async with store.tenant_reader(unique_tenant) as conn:
        cur = await conn.execute(
            "SELECT count(*) FROM chunks WHERE tenant_id = %s", (unique_tenant,)
        )
        row = await cur.fetchone()
    assert row is not None and row[0] > 0


async def test_queries_during_a_rebalance_neither_fail_nor_come_back_short(
    store: Store, limits: IngestLimits, unique_tenant: str, tmp_path: Path
) -> None:
    write_runbooks(tmp_path, 30)
    await ingest(store, tmp_path, unique_tenant, limits)
    expected = [e.chunk_id for e in (await find(store, unique_tenant, exact=True)).evidence]
    moving = True
    answers: list[list[int]] = []

    async def ask_repeatedly(exact: bool) -> None:
        while moving:
            found = await find(store, unique_tenant, exact=exact)
            answers.append([e.chunk_id for e in found.evidence])

    async def move() -> None:
        nonlocal moving
        try:
            await rebalance(
                store, exact_search_max_chunks=0, min_chunks=10, tenants=[unique_tenant]
            )
            await rebalance(
                store, exact_search_max_chunks=0, min_chunks=10_000, tenants=[unique_tenant]
            )
        finally:
            moving = False

    await asyncio.gather(ask_repeatedly(True), ask_repeatedly(False), move())

    assert answers, "queries ran while the tenant moved"
    assert all(found == expected for found in answers)


async def test_ingest_names_a_tenant_that_crossed_the_partition_threshold(
    store: Store, settings: Settings, unique_tenant: str, tmp_path: Path
) -> None:
    write_runbooks(tmp_path, 3)
    limits = IngestLimits(
        max_file_bytes=settings.max_file_bytes,
        chunk_max_chars=settings.chunk_max_chars,
        chunk_overlap_chars=settings.chunk_overlap_chars,
        partition_min_chunks=2,
    )
    report = await ingest_path(
        store, EMBEDDER, tmp_path, tenant=unique_tenant, prune=False, limits=limits
    )
    assert report.rebalance_due == [unique_tenant]
    assert report.as_json()["rebalance_due"] == [unique_tenant]


async def test_rebalance_of_an_unknown_tenant_or_threshold_below_one_is_a_clear_error(
    store: Store,
) -> None:
    with pytest.raises(ConfigurationError, match="no such tenant: nobody-here"):
        await rebalance(store, exact_search_max_chunks=0, min_chunks=10, tenants=["nobody-here"])
    with pytest.raises(ConfigurationError, match="at least 1"):
        await rebalance(store, exact_search_max_chunks=0, min_chunks=0, tenants=[])


async def run_cli(database_url: str, *args: str) -> tuple[int, str]:
    env = {**os.environ, "DATABASE_URL": database_url, "PYTHONPATH": str(REPO)}
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "rag",
        *args,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    out, _ = await process.communicate()
    assert process.returncode is not None
    return process.returncode, out.decode()


async def test_db_rebalance_command_prints_what_moves_and_rejects_an_unknown_tenant(
    store: Store, limits: IngestLimits, database_url: str, unique_tenant: str, tmp_path: Path
) -> None:
    write_runbooks(tmp_path, 3)
    await ingest(store, tmp_path, unique_tenant, limits)
    rebalance_args = ("db", "rebalance", "--tenant", unique_tenant, "--min-chunks", "2")

    dry_code, dry_out = await run_cli(database_url, *rebalance_args, "--dry-run")
    code, out = await run_cli(database_url, *rebalance_args)
    unknown_code, unknown_out = await run_cli(database_url, "db", "rebalance", "--tenant", "nope")

    assert dry_code == 0 and f"would move to its own partition: {unique_tenant}" in dry_out
    assert code == 0 and f"moved to its own partition: {unique_tenant}" in out
    assert await own_partition(store, unique_tenant) is not None
    assert unknown_code == 2 and "no such tenant: nope" in unknown_out


async def test_a_partition_gets_a_graph_per_dimension_once_too_big_for_an_exact_scan(
    store: Store, limits: IngestLimits, unique_tenant: str, tmp_path: Path
) -> None:
    write_runbooks(tmp_path, 3)
    await ingest(store, tmp_path, unique_tenant, limits)
    await rebalance(store, exact_search_max_chunks=10**6, min_chunks=1, tenants=[unique_tenant])
    table = await own_partition(store, unique_tenant)
    assert table is not None
    small_enough_to_scan = await graphs(store, table)

    walked = replace(limits, exact_search_max_chunks=0)
    await ingest_path(
        store, HashEmbedder(dim=8), tmp_path, tenant=unique_tenant, prune=False, limits=walked
    )
    await ingest(store, tmp_path, unique_tenant, walked)

    assert small_enough_to_scan == []
    assert await graphs(store, table) == [(table, f"{table}_hnsw_16"), (table, f"{table}_hnsw_8")]


async def graphs(store: Store, table: str) -> list[tuple[str, str]]:
    """HNSW indexes of ``table`` and of the shared partitions (which never have one)."""
    async with store.pool.connection() as conn:
        cur = await conn.execute(
            "SELECT tablename, indexname FROM pg_indexes WHERE indexdef LIKE '%%USING hnsw%%' "
            "AND (tablename = %s OR tablename LIKE 'chunks_shared%%')",
            (table,),
        )
        return sorted(await cur.fetchall())
