"""A source sync reads, embeds and writes a few items at a time (``sync_batch_items``) and still
publishes all or nothing: small batches store exactly what one batch does, and a failure in a
later batch leaves the tenant as it was."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path

import pytest

from rag import (
    GitReader,
    IngestLimits,
    PruneRefusedError,
    Settings,
    SourceListing,
    SourceRead,
    SourceSyncError,
    Store,
    get_source,
    ingest_limits,
    sync_source,
)
from tests.git_repos import GitRepo
from tests.hash_embedder import HashEmbedder
from tests.test_sources_git import current, git_source, reader_of

RST = "Certificate expiry\n==================\n\nRenewal\n-------\n\nRun certbot renew.\n"
HTML = "<h1>Queue backlog</h1><h2>Drain</h2><p>Scale the consumers to twelve pods.</p>"


class BatchRecorder:
    """A ``SourceReader`` that reads through a real one, keeps the size of each read, and
    fails the read of batch ``fail_at`` (1-based) as an unreachable source would."""

    def __init__(self, inner: GitReader, *, fail_at: int | None = None) -> None:
        self.inner = inner
        self.fail_at = fail_at
        self.batches: list[int] = []  # items asked for, per read
        self.read: list[int] = []  # items read, per read

    async def list_items(self) -> SourceListing:
        return await self.inner.list_items()

    async def read_items(
        self, listing: SourceListing, item_ids: Sequence[str], *, max_bytes: int | None = None
    ) -> SourceRead:
        self.batches.append(len(item_ids))
        if len(self.batches) == self.fail_at:
            raise SourceSyncError(self.inner.name, "connection reset in batch 3")
        read = await self.inner.read_items(listing, item_ids, max_bytes=max_bytes)
        self.read.append(len(item_ids) - len(read.unread))
        return read


def batches_of(settings: Settings, size: int) -> IngestLimits:
    return dataclasses.replace(ingest_limits(settings), sync_batch_items=size)


def fill(repo: GitRepo, edit: int = 0) -> None:
    for n in range(7):
        repo.write(f"r{n}.md", f"# Runbook {n}\n\n## Fix\nRestart worker pool {n} (rev {edit}).\n")
    repo.write("certs.rst", RST)
    repo.write("queue.html", HTML)
    repo.write("empty.md", "")
    repo.write("logo.md", b"\x89PNG\r\n\x1a\n\x00\x00binary")


async def test_a_sync_in_batches_of_two_stores_what_one_batch_stores(
    store: Store, settings: Settings, unique_tenant: str, tmp_path: Path
) -> None:
    repo = GitRepo(tmp_path / "repo")
    fill(repo)
    repo.commit("runbooks")
    whole, batched = f"{unique_tenant}-whole", f"{unique_tenant}-batched"
    rows = {t: await git_source(store, t, repo) for t in (whole, batched)}
    readers = {t: BatchRecorder(reader_of(rows[t], settings, tmp_path / t)) for t in rows}
    limits = {whole: batches_of(settings, 1000), batched: batches_of(settings, 2)}

    async def sync_both() -> list[dict[str, object]]:
        reports = []
        for tenant in (whole, batched):
            report = await sync_source(
                store, HashEmbedder(), rows[tenant], readers[tenant], limits[tenant]
            )
            reports.append({**report.as_json(), "tenant": "", "seconds": 0})
        return reports

    first = await sync_both()
    repo.write("r1.md", "# Runbook 1\n\n## Fix\nDrain the node first.\n")
    repo.write("r5.md", "# Runbook 5\n\n## Fix\nFail over to the replica.\n")
    repo.git("rm", "-q", "r6.md")
    repo.commit("edit two, drop one")
    again = await sync_both()

    assert first[0] == first[1] and again[0] == again[1]
    assert first[1]["documents"] == {
        "added": 9, "changed": 0, "unchanged": 0, "retired": 0, "skipped": 2, "failed": 0
    }  # fmt: skip
    assert again[1]["documents"] == {
        "added": 0, "changed": 2, "unchanged": 6, "retired": 1, "skipped": 2, "failed": 0
    }  # fmt: skip
    assert await current(store, batched) == await current(store, whole)
    assert readers[batched].batches == [2, 2, 2, 2, 2, 1, 2]
    assert readers[whole].batches == [11, 2]


async def test_a_sync_that_fails_in_a_later_batch_leaves_the_tenant_as_it_was(
    store: Store, settings: Settings, unique_tenant: str, tmp_path: Path
) -> None:
    repo = GitRepo(tmp_path / "repo")
    fill(repo)
    repo.commit("runbooks")
    row = await git_source(store, unique_tenant, repo)
    reader = reader_of(row, settings, tmp_path)
    await sync_source(store, HashEmbedder(), row, reader, batches_of(settings, 2))
    before = await current(store, unique_tenant)
    synced = await get_source(store, row.source_id)
    fill(repo, edit=1)
    repo.git("rm", "-q", "certs.rst", "queue.html")
    repo.commit("edit all, drop two")
    failing = BatchRecorder(reader, fail_at=3)

    with pytest.raises(SourceSyncError):
        await sync_source(store, HashEmbedder(), row, failing, batches_of(settings, 2), force=True)

    assert failing.batches == [2, 2, 2]  # two batches were embedded and written before it
    assert await current(store, unique_tenant) == before
    after = await get_source(store, row.source_id)
    assert synced is not None and after is not None
    assert after.last_version == synced.last_version
    again = await sync_source(store, HashEmbedder(), row, reader, batches_of(settings, 2))
    assert (again.changed, again.retired) == (7, 2)


async def test_a_prune_the_listing_already_shows_is_refused_before_any_item_is_read(
    store: Store, settings: Settings, unique_tenant: str, tmp_path: Path
) -> None:
    repo = GitRepo(tmp_path / "repo")
    fill(repo)
    repo.commit("runbooks")
    row = await git_source(store, unique_tenant, repo)
    reader = reader_of(row, settings, tmp_path)
    await sync_source(store, HashEmbedder(), row, reader, batches_of(settings, 2))
    repo.git("rm", "-q", *(f"r{n}.md" for n in range(6)))
    repo.write("r6.md", "# Runbook 6\n\n## Fix\nChanged too.\n")
    repo.commit("drop six")
    recording = BatchRecorder(reader)

    with pytest.raises(PruneRefusedError):
        await sync_source(store, HashEmbedder(), row, recording, batches_of(settings, 2))

    assert recording.batches == []
    assert len(await current(store, unique_tenant)) == 9


async def test_a_batch_ends_at_its_bytes_before_its_items_and_stores_what_one_batch_stores(
    store: Store, settings: Settings, unique_tenant: str, tmp_path: Path
) -> None:
    repo = GitRepo(tmp_path / "repo")
    for n in range(10):
        head = f"# Runbook {n}\n\n## Fix\n"
        repo.write(f"r{n}.md", head + "Drain the node. " * 200)  # 3,2xx bytes each
    repo.commit("ten runbooks of 3 KB")
    whole, by_bytes = f"{unique_tenant}-whole", f"{unique_tenant}-bytes"
    rows = {t: await git_source(store, t, repo) for t in (whole, by_bytes)}
    readers = {t: BatchRecorder(reader_of(rows[t], settings, tmp_path / t)) for t in rows}
    limits = {
        whole: batches_of(settings, 50),
        by_bytes: dataclasses.replace(batches_of(settings, 50), sync_batch_bytes=10_000),
    }

    for tenant in rows:
        report = await sync_source(
            store, HashEmbedder(), rows[tenant], readers[tenant], limits[tenant]
        )
        assert report.added == 10

    assert readers[whole].read == [10]
    # A read stops at the item that reaches 10,000 bytes; what it left starts the next read.
    assert readers[by_bytes].read == [4, 4, 2]
    assert readers[by_bytes].batches == [10, 6, 2]
    assert await current(store, by_bytes) == await current(store, whole)
