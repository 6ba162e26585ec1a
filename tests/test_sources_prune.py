"""A folder ingest's ``--prune`` leaves the documents a runbook source publishes alone, and a
sync brings back a source's document that was retired behind its back."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.core.sources.runs import run_sync
from rag import Settings, SourceRow, Store, add_source, ingest_limits, ingest_path
from rag.ingest.write import retire_documents
from tests.git_repos import GitRepo, local_sources
from tests.hash_embedder import HashEmbedder
from tests.test_ingest_prune import current_ids, populate
from tests.test_sources_cli import DISK


@pytest.fixture(scope="session")
def settings(settings: Settings) -> Settings:
    """The session's settings with the operator allowance for file:// repositories."""
    return local_sources(settings)


async def synced_git_source(
    store: Store, settings: Settings, tenant: str, repo: GitRepo
) -> SourceRow:
    row = await add_source(
        store,
        tenant=tenant,
        name="runbooks",
        kind="git",
        settings={"url": repo.url, "branch": "main", "path": ""},
        credential=None,
        webhook_secret={"secret": "s"},
    )
    first = await run_sync(store, HashEmbedder(), row, settings=settings, cipher=None)
    assert first.report is not None and first.report.added == 1, first.error
    return row


def repo_with_disk_runbook(root: Path) -> GitRepo:
    repo = GitRepo(root)
    repo.write("source-disk.md", DISK)
    repo.commit("the source's runbook")
    return repo


async def test_a_folder_ingest_with_prune_never_retires_what_a_source_publishes(
    store: Store, settings: Settings, unique_tenant: str, tmp_path: Path
) -> None:
    row = await synced_git_source(
        store, settings, unique_tenant, repo_with_disk_runbook(tmp_path / "repo")
    )
    folder = tmp_path / "folder"
    populate(folder, ("memory", "network", "certificates", "dns"))
    await ingest_path(
        store,
        HashEmbedder(),
        folder,
        tenant=unique_tenant,
        prune=False,
        limits=ingest_limits(settings),
    )
    (folder / "dns.md").unlink()

    pruned = await ingest_path(
        store,
        HashEmbedder(),
        folder,
        tenant=unique_tenant,
        prune=True,
        limits=ingest_limits(settings),
    )
    again = await run_sync(store, HashEmbedder(), row, settings=settings, cipher=None)

    assert pruned.removed == 1  # dns, which the folder lost; never the source's runbook
    assert await current_ids(store, unique_tenant) == {
        "memory",
        "network",
        "certificates",
        "source-disk",
    }
    assert again.report is not None and again.report.unchanged == 1


async def test_a_sync_publishes_again_a_document_of_its_own_retired_by_a_prune(
    store: Store, settings: Settings, unique_tenant: str, tmp_path: Path
) -> None:
    row = await synced_git_source(
        store, settings, unique_tenant, repo_with_disk_runbook(tmp_path / "repo")
    )
    # What `runbook ingest --prune` did to a source's documents before it knew about sources.
    assert await retire_documents(store, unique_tenant, ["source-disk"]) == 1

    resynced = await run_sync(store, HashEmbedder(), row, settings=settings, cipher=None)
    settled = await run_sync(store, HashEmbedder(), row, settings=settings, cipher=None)

    assert resynced.report is not None
    assert resynced.report.added + resynced.report.changed == 1
    assert await current_ids(store, unique_tenant) == {"source-disk"}
    assert settled.report is not None and settled.report.unchanged == 1
    assert settled.report.chunks_written == 0
