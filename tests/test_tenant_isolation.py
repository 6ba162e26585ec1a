"""The tenant boundary twice over: WHERE clauses and row-level security, probed at volume."""

from __future__ import annotations

import random
import re
from pathlib import Path

import psycopg
import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st
from psycopg.rows import TupleRow

from rag import RagService, Settings, Store, ingest_limits, ingest_path
from rag.answering.answerers import ExtractiveAnswerer
from rag.retrieval.retrieve import BM25_PARAMS, HYBRID_QUERY
from tests.hash_embedder import HashEmbedder

EMBEDDER = HashEmbedder(dim=32)
WORLDS = 20
PROBES_PER_WORLD = 500


def without_tenant_predicates(query: str) -> str:
    """The hybrid query with every tenant predicate deliberately removed, and the keyword
    candidates asked for another tenant's rows."""
    stripped = re.sub(r"\b(?:\w+\.)?tenant_id = %\(tenant\)s AND ", "", query)
    stripped = re.sub(r"\bWHERE (?:\w+\.)?tenant_id = %\(tenant\)s", "WHERE true", stripped)
    stripped = stripped.replace(
        "tenant_chunks_matching(%(tenant)s", "tenant_chunks_matching(%(other)s"
    )
    assert "%(tenant)s" not in stripped
    return stripped


async def test_retrieval_without_its_tenant_predicate_still_sees_only_that_tenant(
    store: Store, settings: Settings, tmp_path: Path, unique_tenant: str
) -> None:
    other = f"{unique_tenant}-other"
    for tenant, word in ((unique_tenant, "alpha"), (other, "omega")):
        folder = tmp_path / tenant
        folder.mkdir()
        (folder / "doc.md").write_text(f"# {word}\n\n## Steps\n{word} restart the {word} pods.\n")
        await ingest_path(
            store, EMBEDDER, folder, tenant=tenant, prune=False, limits=ingest_limits(settings)
        )
    query = without_tenant_predicates(HYBRID_QUERY.replace("{dim}", str(EMBEDDER.dim)))
    vector = (await EMBEDDER.embed(["restart the pods"]))[0]
    params = {
        "question": "restart the pods",
        "embedding": vector,
        "model": EMBEDDER.model_id,
        "service": None,
        "candidates": 50,
        # Both tenants hold a runbook "doc": the named arm too is filtered by RLS alone here.
        "named": "doc",
        "named_sections": 8,
        "other": other,
        **BM25_PARAMS,
    }
    async with store.tenant_reader(unique_tenant) as conn:
        cur = await conn.execute(query.encode(), params)
        rows = await cur.fetchall()
        cur = await conn.execute("SELECT DISTINCT tenant_id FROM chunks")
        visible = {row[0] for row in await cur.fetchall()}
    assert rows and all("alpha" in row[5] for row in rows)
    assert visible == {unique_tenant}
    async with store.pool.connection() as conn:
        cur = await conn.execute(
            "SELECT count(DISTINCT tenant_id) FROM chunks WHERE tenant_id IN (%s, %s)",
            (unique_tenant, other),
        )
        row = await cur.fetchone()
    assert row is not None and row[0] == 2, "the owner still sees both: RLS is what filtered"


_MATCHING = """
SELECT count(*) FROM tenant_chunks_matching(%s, 'restart'::tsquery, %s, %s, NULL)
"""


async def _matching(conn: psycopg.AsyncConnection[TupleRow], tenant: str) -> int:
    cur = await conn.execute(_MATCHING, (tenant, EMBEDDER.dim, EMBEDDER.model_id))
    row = await cur.fetchone()
    assert row is not None
    return int(row[0])


async def test_keyword_candidates_come_only_from_the_tenant_the_transaction_reads_as(
    store: Store, settings: Settings, tmp_path: Path, unique_tenant: str
) -> None:
    """tenant_chunks_matching() runs as the owner (to reach the GIN index) but requires its
    tenant argument to be the one row-level security reads; anything else fails closed."""
    other = f"{unique_tenant}-other"
    for tenant in (unique_tenant, other):
        folder = tmp_path / tenant
        folder.mkdir()
        (folder / "doc.md").write_text("# Pods\n\n## Steps\nRestart the pods.\n")
        await ingest_path(
            store, EMBEDDER, folder, tenant=tenant, prune=False, limits=ingest_limits(settings)
        )
    async with store.tenant_reader(unique_tenant) as conn:
        assert await _matching(conn, unique_tenant) == 1
        assert await _matching(conn, other) == 0
    async with store.pool.connection() as conn, conn.transaction():
        await conn.execute("SET LOCAL ROLE runbook_reader")
        assert await _matching(conn, unique_tenant) == 0, "no tenant setting: nothing"
    async with store.pool.connection() as conn:
        assert await _matching(conn, unique_tenant) == 0, "not even the owner without one"


async def test_keyword_candidates_function_is_locked_down(store: Store) -> None:
    async with store.pool.connection() as conn:
        cur = await conn.execute(
            """
            SELECT p.prosecdef, p.proconfig,
                   ARRAY(SELECT coalesce(r.rolname, 'PUBLIC')
                         FROM aclexplode(p.proacl) AS a
                         LEFT JOIN pg_roles AS r ON r.oid = a.grantee
                         WHERE a.privilege_type = 'EXECUTE' AND a.grantee <> p.proowner)
            FROM pg_proc AS p WHERE p.proname = 'tenant_chunks_matching'
            """
        )
        row = await cur.fetchone()
    assert row is not None
    definer, config, executors = row
    assert definer
    assert any(
        setting.startswith("search_path=") and setting.endswith("pg_temp") for setting in config
    )
    assert executors == ["runbook_reader"], "PUBLIC may not call it"


async def test_reader_without_a_tenant_setting_sees_no_rows(store: Store) -> None:
    async with store.pool.connection() as conn, conn.transaction():
        await conn.execute("SET LOCAL ROLE runbook_reader")
        cur = await conn.execute("SELECT count(*) FROM chunks")
        row = await cur.fetchone()
    assert row is not None and row[0] == 0


WORD = st.text(alphabet="bcdfghjklmnpqrstvwxz", min_size=5, max_size=9)


@st.composite
def worlds(draw: st.DrawFn) -> list[list[str]]:
    """Three to five tenants, each with its own vocabulary of made-up words."""
    words = draw(st.lists(WORD, min_size=30, max_size=50, unique=True))
    count = draw(st.integers(min_value=3, max_value=5))
    return [words[i::count] for i in range(count)]


@pytest.mark.slow
async def test_ten_thousand_probes_never_return_another_tenants_row(
    store: Store, settings: Settings, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Hypothesis builds the worlds; each world then takes PROBES_PER_WORLD probes."""
    service = RagService(
        store=store, embedder=EMBEDDER, answerer=ExtractiveAnswerer(), settings=settings
    )
    probes = 0
    seen_worlds: list[list[list[str]]] = []
    seeds: list[int] = []

    @hypothesis_settings(
        max_examples=WORLDS,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )
    @given(world=worlds(), seed=st.integers(min_value=0, max_value=2**32 - 1))
    def build(world: list[list[str]], seed: int) -> None:
        seen_worlds.append(world)
        seeds.append(seed)

    build()
    for index, (world, seed) in enumerate(zip(seen_worlds, seeds, strict=True)):
        rng = random.Random(seed)
        tenants = [f"iso{index}-{seed % 10_000}-{n}" for n in range(len(world))]
        chunk_owner: dict[int, str] = {}
        root = tmp_path_factory.mktemp(f"world{index}")
        for tenant, vocabulary in zip(tenants, world, strict=True):
            folder = root / tenant
            folder.mkdir()
            for number in range(3):
                body = " ".join(rng.choice(vocabulary) for _ in range(40))
                (folder / f"doc{number}.md").write_text(f"# {vocabulary[0]} {number}\n\n{body}.\n")
            await ingest_path(
                store, EMBEDDER, folder, tenant=tenant, prune=False, limits=ingest_limits(settings)
            )
        async with store.pool.connection() as conn:
            cur = await conn.execute(
                "SELECT chunk_id, tenant_id FROM chunks WHERE tenant_id = ANY(%s)", (tenants,)
            )
            chunk_owner = {row[0]: row[1] for row in await cur.fetchall()}
        empty_tenant = f"iso{index}-{seed % 10_000}-empty"
        for _ in range(PROBES_PER_WORLD):
            asker = rng.randrange(len(tenants) + 1)
            source = rng.randrange(len(tenants))
            question = " ".join(rng.choice(world[source]) for _ in range(rng.randint(1, 6)))
            tenant = tenants[asker] if asker < len(tenants) else empty_tenant
            retrieval = await service.retrieve(tenant, question)
            evidence = retrieval.candidates.evidence
            assert all(chunk_owner.get(e.chunk_id) == tenant for e in evidence), (tenant, question)
            if tenant == empty_tenant:
                assert evidence == () and retrieval.gate.reason == "no_evidence"
            probes += 1
    assert probes >= WORLDS * PROBES_PER_WORLD >= 10_000
