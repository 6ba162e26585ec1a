"""A source of thousands of documents syncs in one transaction without running Postgres out of
lock slots: the advisory locks a sync holds do not grow with the documents it writes (the shared
lock table has room for max_locks_per_transaction x max_connections, 64 x 100 by default)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path

from rag import (
    GitReader,
    Settings,
    SourceListing,
    SourceRead,
    Store,
    ingest_limits,
    sync_source,
)
from tests.git_repos import GitRepo
from tests.hash_embedder import HashEmbedder
from tests.test_sources_git import current, git_source, reader_of

_ADVISORY_LOCKS_HELD = """
SELECT count(*) FROM pg_locks
WHERE locktype = 'advisory' AND granted AND database = (
    SELECT oid FROM pg_database WHERE datname = current_database())
"""


class LockSampler:
    """A ``SourceReader`` that reads through a real one and, before each batch, counts the
    advisory locks held in the database: the sync's earlier batches are written by then."""

    def __init__(self, inner: GitReader, store: Store) -> None:
        self.inner = inner
        self.store = store
        self.held: list[int] = []

    async def list_items(self) -> SourceListing:
        return await self.inner.list_items()

    async def read_items(
        self, listing: SourceListing, item_ids: Sequence[str], *, max_bytes: int | None = None
    ) -> SourceRead:
        async with self.store.pool.connection() as conn:
            cur = await conn.execute(_ADVISORY_LOCKS_HELD)
            row = await cur.fetchone()
            assert row is not None
            self.held.append(int(row[0]))
        return await self.inner.read_items(listing, item_ids, max_bytes=max_bytes)


async def test_a_sync_of_many_documents_holds_as_few_advisory_locks_as_a_sync_of_one(
    store: Store, settings: Settings, unique_tenant: str, tmp_path: Path
) -> None:
    repo = GitRepo(tmp_path / "repo")
    for n in range(150):
        repo.write(f"pages/p{n:03}.md", f"# Page {n}\n\nRestart worker pool {n}.\n")
    repo.commit("150 pages")
    row = await git_source(store, unique_tenant, repo)
    sampler = LockSampler(reader_of(row, settings, tmp_path), store)
    limits = dataclasses.replace(ingest_limits(settings), sync_batch_items=10)

    report = await sync_source(store, HashEmbedder(), row, sampler, limits)

    assert report.added == 150 and len(await current(store, unique_tenant)) == 150
    assert len(sampler.held) == 15
    # The tenant's ingest lock (its own connection) and the writing transaction's tenant lock;
    # before, one more per document written so far (140 by the last batch).
    assert max(sampler.held) <= 2
