"""``--prune`` cannot wipe a tenant by accident, and two ingests of one tenant take turns."""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import Sequence
from pathlib import Path

import pytest

from rag import (
    ConfigurationError,
    IngestLimits,
    RunbookError,
    Settings,
    Store,
    ingest_limits,
    ingest_path,
)
from rag.cli import main
from rag.embedding.embedder import Vectors
from tests.hash_embedder import HashEmbedder

TOPICS = ("disk", "memory", "network", "certificates")


def runbook(topic: str) -> str:
    return f"# {topic} alert\n\n## Mitigation\nFollow the {topic} procedure and page the owner.\n"


def populate(root: Path, topics: Sequence[str] = TOPICS) -> None:
    root.mkdir(parents=True, exist_ok=True)
    for topic in topics:
        (root / f"{topic}.md").write_text(runbook(topic), encoding="utf-8")


def empty_folder(root: Path) -> None:
    for path in root.iterdir():
        path.unlink()


@pytest.fixture
def limits(settings: Settings) -> IngestLimits:
    return ingest_limits(settings)


async def current_ids(store: Store, tenant: str) -> set[str]:
    async with store.pool.connection() as conn:
        cur = await conn.execute(
            "SELECT document_id FROM documents WHERE tenant_id = %s AND NOT superseded", (tenant,)
        )
        return {row[0] for row in await cur.fetchall()}


async def ingest(
    store: Store, root: Path, tenant: str, limits: IngestLimits, *, force: bool = False
) -> int:
    # Only a forcing call names ``force``, so the guard tests also ran against the old code.
    if force:
        report = await ingest_path(
            store, HashEmbedder(), root, tenant=tenant, prune=True, limits=limits, force=True
        )
    else:
        report = await ingest_path(
            store, HashEmbedder(), root, tenant=tenant, prune=True, limits=limits
        )
    return report.removed


async def test_prune_of_an_emptied_folder_is_refused_and_retires_nothing(
    store: Store, limits: IngestLimits, unique_tenant: str, tmp_path: Path
) -> None:
    populate(tmp_path)
    await ingest(store, tmp_path, unique_tenant, limits)
    empty_folder(tmp_path)

    with pytest.raises(RunbookError) as refused:
        await ingest(store, tmp_path, unique_tenant, limits)

    assert refused.value.code == "prune_refused"
    assert "--force" in str(refused.value) and "4 of 4" in str(refused.value)
    assert await current_ids(store, unique_tenant) == set(TOPICS)


async def test_prune_of_a_missing_folder_is_an_error_and_retires_nothing(
    store: Store, limits: IngestLimits, unique_tenant: str, tmp_path: Path
) -> None:
    populate(tmp_path / "runbooks")
    await ingest(store, tmp_path / "runbooks", unique_tenant, limits)
    shutil.rmtree(tmp_path / "runbooks")

    with pytest.raises(ConfigurationError, match="is not a folder"):
        await ingest(store, tmp_path / "runbooks", unique_tenant, limits)

    assert await current_ids(store, unique_tenant) == set(TOPICS)


async def test_prune_of_more_than_half_is_refused_but_half_is_allowed(
    store: Store, limits: IngestLimits, unique_tenant: str, tmp_path: Path
) -> None:
    populate(tmp_path)
    await ingest(store, tmp_path, unique_tenant, limits)
    for topic in TOPICS[:3]:
        (tmp_path / f"{topic}.md").unlink()

    with pytest.raises(RunbookError, match="3 of 4"):
        await ingest(store, tmp_path, unique_tenant, limits)
    assert await current_ids(store, unique_tenant) == set(TOPICS)

    populate(tmp_path, ["memory"])
    assert await ingest(store, tmp_path, unique_tenant, limits) == 2
    assert await current_ids(store, unique_tenant) == {"memory", "certificates"}


async def test_force_prunes_everything_that_is_gone(
    store: Store, limits: IngestLimits, unique_tenant: str, tmp_path: Path
) -> None:
    populate(tmp_path)
    await ingest(store, tmp_path, unique_tenant, limits)
    empty_folder(tmp_path)

    assert await ingest(store, tmp_path, unique_tenant, limits, force=True) == len(TOPICS)
    assert await current_ids(store, unique_tenant) == set()


def test_cli_refuses_the_prune_with_a_clear_message_and_exit_1(
    database_url: str,
    settings: Settings,
    unique_tenant: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("DATABASE_URL", database_url)
    monkeypatch.setenv("RUNBOOK_DATA_DIR", str(settings.data_dir))
    populate(tmp_path)
    assert main(["ingest", str(tmp_path), "--tenant", unique_tenant, "--json"]) == 0
    empty_folder(tmp_path)
    capsys.readouterr()

    status = main(["ingest", str(tmp_path), "--tenant", unique_tenant, "--prune"])

    error = capsys.readouterr().err
    assert status == 1
    assert "refusing to prune 4 of 4" in error and "--force" in error
    assert main(["ingest", str(tmp_path), "--tenant", unique_tenant, "--prune", "--force"]) == 0


class GatedEmbedder(HashEmbedder):
    """A real embedder that, once, waits at its first call until the test lets it go."""

    def __init__(self) -> None:
        super().__init__()
        self.entered = asyncio.Event()
        self.release = asyncio.Event()

    async def embed(self, texts: Sequence[str]) -> Vectors:
        if not self.entered.is_set():
            self.entered.set()
            await self.release.wait()
        return await super().embed(texts)


async def waiting_advisory_locks(store: Store) -> int:
    async with store.pool.connection() as conn:
        cur = await conn.execute(
            "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted"
        )
        row = await cur.fetchone()
    return int(row[0]) if row else 0


async def test_two_ingests_of_one_tenant_take_turns(
    store: Store, limits: IngestLimits, unique_tenant: str, tmp_path: Path
) -> None:
    first_root, second_root = tmp_path / "first", tmp_path / "second"
    populate(first_root, TOPICS[:2])
    populate(second_root, TOPICS[:2])
    (second_root / "disk.md").write_text(runbook("disk") + "Edited.\n", encoding="utf-8")
    gated = GatedEmbedder()
    first = asyncio.create_task(
        ingest_path(store, gated, first_root, tenant=unique_tenant, prune=True, limits=limits)
    )
    await asyncio.wait_for(gated.entered.wait(), timeout=30)
    second = asyncio.create_task(
        ingest_path(
            store, HashEmbedder(), second_root, tenant=unique_tenant, prune=True, limits=limits
        )
    )
    try:
        for _ in range(200):
            if await waiting_advisory_locks(store):
                break
            await asyncio.sleep(0.05)
        # The second ingest waits on the tenant's lock while the first is mid-way.
        assert await waiting_advisory_locks(store) >= 1
        assert not second.done()
    finally:
        gated.release.set()
    first_report, second_report = await asyncio.wait_for(asyncio.gather(first, second), 60)

    assert first_report.added == 2
    # The second ran after the first finished: it saw the first's documents as stored.
    assert (second_report.added, second_report.changed, second_report.unchanged) == (0, 1, 1)


async def test_the_demo_never_prunes_what_its_corpus_lacks(
    store: Store, settings: Settings, unique_tenant: str, tmp_path: Path
) -> None:
    from rag import run_demo

    corpus = tmp_path / "corpus"
    populate(corpus / unique_tenant)
    await ingest_path(
        store, HashEmbedder(), corpus, tenant=None, prune=False, limits=ingest_limits(settings)
    )
    for topic in TOPICS[1:]:
        (corpus / unique_tenant / f"{topic}.md").unlink()
    golden = tmp_path / "golden.jsonl"
    golden.write_text(
        '{"id": "q1", "tenant": "elsewhere", "question": "disk?", "expect": "abstain"}\n',
        encoding="utf-8",
    )

    assert await run_demo(settings, corpus, golden) == 0
    assert await current_ids(store, unique_tenant) == set(TOPICS)
