"""Git sources against real repositories made in the test (``file://``): first and incremental
syncs, deletions through the prune guard, links, binary and oversize files, failures that
change nothing."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from rag import (
    EmbeddingError,
    GitReader,
    GitSourceSettings,
    PruneRefusedError,
    Settings,
    SourceRow,
    SourceSyncError,
    Store,
    add_source,
    get_source,
    ingest_limits,
    sync_source,
)
from rag.embedding.embedder import Vectors
from tests.git_repos import LOCAL_SOURCES, GitRepo
from tests.hash_embedder import HashEmbedder

DISK = "# Disk full\n\n## Mitigation\nDelete old WAL segments only after a verified backup.\n"
RST = (
    "Certificate expiry\n==================\n\nRenewal\n-------\n\nRun certbot renew on the edge.\n"
)
HTML = "<h1>Queue backlog</h1><h2>Drain</h2><p>Scale the consumers to twelve pods.</p>"


async def git_source(store: Store, tenant: str, repo: GitRepo, **settings: str) -> SourceRow:
    return await add_source(
        store,
        tenant=tenant,
        name="runbooks",
        kind="git",
        settings={"url": repo.url, **settings},
        credential=None,
        webhook_secret={"secret": "s"},
    )


def reader_of(row: SourceRow, settings: Settings, tmp_path: Path, **overrides: object) -> GitReader:
    return GitReader(
        name=f"{row.tenant_id}/{row.name}",
        settings=GitSourceSettings.model_validate(row.settings),
        credential=None,
        cache_dir=tmp_path / "cache" / str(row.source_id),
        max_file_bytes=int(str(overrides.get("max_file_bytes", settings.max_file_bytes))),
        access=LOCAL_SOURCES,
    )


async def current(store: Store, tenant: str) -> dict[str, tuple[str, str | None, str | None, str]]:
    """document id → (all chunk text, owner, updated, updated_source) of current documents."""
    async with store.pool.connection() as conn:
        cur = await conn.execute(
            "SELECT d.document_id, string_agg(c.content, ' '), d.owner, d.updated, "
            "coalesce(d.updated_source, '') FROM documents d "
            "JOIN chunks c USING (tenant_id, document_id, version) "
            "WHERE d.tenant_id = %s AND NOT d.superseded "
            "GROUP BY d.document_id, d.owner, d.updated, d.updated_source",
            (tenant,),
        )
        return {row[0]: (row[1], row[2], row[3], row[4]) for row in await cur.fetchall()}


async def test_a_git_folder_syncs_markdown_rst_and_html_with_dates_and_codeowners(
    store: Store, settings: Settings, unique_tenant: str, tmp_path: Path
) -> None:
    repo = GitRepo(tmp_path / "repo")
    repo.write("README.md", "# Not a runbook: outside --path\n\nService code lives here.\n")
    repo.write("docs/runbooks/db/disk.md", DISK)
    repo.write("docs/runbooks/certs.rst", RST)
    repo.write("docs/runbooks/queue.html", HTML)
    repo.write(".github/CODEOWNERS", "*  @acme/sre\n/docs/runbooks/db/  @acme/dba\n")
    repo.commit("runbooks", when="2026-03-01T12:00:00+00:00")
    row = await git_source(store, unique_tenant, repo, path="docs/runbooks")

    report = await sync_source(
        store, HashEmbedder(), row, reader_of(row, settings, tmp_path), ingest_limits(settings)
    )

    documents = await current(store, unique_tenant)
    assert sorted(documents) == ["certs", "db/disk", "queue"]
    assert "certbot renew" in documents["certs"][0]
    assert "twelve pods" in documents["queue"][0]
    assert documents["db/disk"][1:] == ("@acme/dba", "2026-03-01", "git")
    assert documents["certs"][1] == "@acme/sre"
    assert (report.added, report.changed, report.unchanged, report.retired) == (3, 0, 0, 0)
    assert report.version == repo.git("rev-parse", "HEAD")
    stored = await get_source(store, row.source_id)
    assert stored is not None and stored.last_outcome == "synced"
    assert stored.last_version == report.version


async def test_frontmatter_owner_and_date_win_over_codeowners_and_commit_time(
    store: Store, settings: Settings, unique_tenant: str, tmp_path: Path
) -> None:
    repo = GitRepo(tmp_path / "repo")
    repo.write("disk.md", "---\nowner: dba-oncall\nupdated: 2025-01-02\n---\n" + DISK)
    repo.write("CODEOWNERS", "*.md @acme/sre\n")
    repo.commit("one", when="2026-03-01T12:00:00+00:00")
    row = await git_source(store, unique_tenant, repo)

    await sync_source(
        store, HashEmbedder(), row, reader_of(row, settings, tmp_path), ingest_limits(settings)
    )

    assert (await current(store, unique_tenant))["disk"][1:] == (
        "dba-oncall",
        "2025-01-02",
        "frontmatter",
    )


async def test_an_incremental_sync_embeds_only_the_files_changed_since_the_last(
    store: Store, settings: Settings, unique_tenant: str, tmp_path: Path
) -> None:
    repo = GitRepo(tmp_path / "repo")
    for n in range(4):
        repo.write(f"r{n}.md", f"# Runbook {n}\n\n## Steps\nRestart worker pool {n}.\n")
    repo.commit("four")
    row = await git_source(store, unique_tenant, repo)
    reader = reader_of(row, settings, tmp_path)
    embedder = CountingEmbedder()
    await sync_source(store, embedder, row, reader, ingest_limits(settings))
    repo.write("r2.md", "# Runbook 2\n\n## Steps\nRestart worker pool two, then page the lead.\n")
    repo.write("r9.md", "# Runbook 9\n\n## Steps\nRotate the signing key.\n")
    repo.commit("two changes")
    embedder.texts.clear()

    report = await sync_source(store, embedder, row, reader, ingest_limits(settings))

    assert (report.added, report.changed, report.unchanged) == (1, 1, 3)
    assert len(embedder.texts) == 2
    assert "page the lead" in (await current(store, unique_tenant))["r2"][0]
    embedder.texts.clear()
    again = await sync_source(store, embedder, row, reader, ingest_limits(settings))
    assert (again.added, again.changed, again.unchanged, again.chunks_written) == (0, 0, 5, 0)
    assert embedder.texts == []


async def test_a_file_deleted_from_the_repository_is_retired(
    store: Store, settings: Settings, unique_tenant: str, tmp_path: Path
) -> None:
    repo = GitRepo(tmp_path / "repo")
    for n in range(3):
        repo.write(f"r{n}.md", f"# Runbook {n}\n\nRestart worker pool {n}.\n")
    repo.commit("three")
    row = await git_source(store, unique_tenant, repo)
    reader = reader_of(row, settings, tmp_path)
    await sync_source(store, HashEmbedder(), row, reader, ingest_limits(settings))
    repo.git("rm", "-q", "r1.md")
    repo.commit("drop r1")

    report = await sync_source(store, HashEmbedder(), row, reader, ingest_limits(settings))

    assert report.retired == 1
    assert sorted(await current(store, unique_tenant)) == ["r0", "r2"]


async def test_links_binary_and_oversize_files_are_skipped_with_reasons(
    store: Store, settings: Settings, unique_tenant: str, tmp_path: Path
) -> None:
    repo = GitRepo(tmp_path / "repo")
    repo.write("disk.md", DISK)
    (repo.root / "passwd.md").symlink_to("/etc/passwd")
    repo.write("blob.md", b"# Image\n\x00\x01\x02binary")
    repo.write("huge.md", "# Huge\n\n" + "word " * 400)
    repo.commit("mixed")
    row = await git_source(store, unique_tenant, repo)

    report = await sync_source(
        store,
        HashEmbedder(),
        row,
        reader_of(row, settings, tmp_path, max_file_bytes=1000),
        ingest_limits(settings),
    )

    assert sorted(await current(store, unique_tenant)) == ["disk"]
    reasons = {s.path: s.reason for s in report.skipped}
    assert reasons["passwd.md"] == "symbolic link (not followed)"
    assert reasons["blob.md"] == "binary file (contains NUL bytes)"
    assert reasons["huge.md"].startswith("file is 2008 bytes, over the 1000-byte cap")
    assert report.failed == []


async def test_deleting_most_runbooks_is_refused_unless_forced(
    store: Store, settings: Settings, unique_tenant: str, tmp_path: Path
) -> None:
    repo = GitRepo(tmp_path / "repo")
    for n in range(4):
        repo.write(f"r{n}.md", f"# Runbook {n}\n\nRestart worker pool {n}.\n")
    repo.commit("four")
    row = await git_source(store, unique_tenant, repo)
    reader = reader_of(row, settings, tmp_path)
    await sync_source(store, HashEmbedder(), row, reader, ingest_limits(settings))
    repo.git("rm", "-q", "r0.md", "r1.md", "r2.md")
    repo.commit("drop three")

    with pytest.raises(PruneRefusedError):
        await sync_source(store, HashEmbedder(), row, reader, ingest_limits(settings))
    assert len(await current(store, unique_tenant)) == 4

    forced = await sync_source(
        store, HashEmbedder(), row, reader, ingest_limits(settings), force=True
    )
    assert forced.retired == 3
    assert sorted(await current(store, unique_tenant)) == ["r3"]


class CountingEmbedder(HashEmbedder):
    def __init__(self) -> None:
        super().__init__()
        self.texts: list[str] = []

    async def embed(self, texts: Sequence[str]) -> Vectors:
        self.texts.extend(texts)
        return await super().embed(texts)


class BrokenEmbedder(HashEmbedder):
    """Fails on the second group: a sync cut short after the first group was embedded."""

    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    async def embed(self, texts: Sequence[str]) -> Vectors:
        self.calls += 1
        if self.calls > 1:
            raise EmbeddingError("embedding model crashed")
        return await super().embed(texts)


async def test_a_sync_that_fails_midway_publishes_and_retires_nothing(
    store: Store, settings: Settings, unique_tenant: str, tmp_path: Path
) -> None:
    repo = GitRepo(tmp_path / "repo")
    repo.write("old.md", "# Old\n\nThe old runbook text.\n")
    repo.commit("one")
    row = await git_source(store, unique_tenant, repo)
    reader = reader_of(row, settings, tmp_path)
    await sync_source(store, HashEmbedder(), row, reader, ingest_limits(settings))
    repo.git("rm", "-q", "old.md")
    for n in range(6):
        repo.write(f"n{n}.md", f"# New {n}\n\n" + f"Fresh text {n}. " * 40)
    repo.commit("replace")
    limits = ingest_limits(settings)
    small_groups = type(limits)(**{**limits.__dict__, "embed_group_chunks": 1})

    with pytest.raises(EmbeddingError):
        await sync_source(store, BrokenEmbedder(), row, reader, small_groups, force=True)

    assert sorted(await current(store, unique_tenant)) == ["old"]
    stored = await get_source(store, row.source_id)
    assert stored is not None and stored.last_version != repo.git("rev-parse", "HEAD")


async def test_a_branch_that_does_not_exist_is_a_clear_error_that_changes_nothing(
    store: Store, settings: Settings, unique_tenant: str, tmp_path: Path
) -> None:
    repo = GitRepo(tmp_path / "repo")
    repo.write("disk.md", DISK)
    repo.commit("one")
    row = await git_source(store, unique_tenant, repo, branch="release")

    with pytest.raises(SourceSyncError) as raised:
        await sync_source(
            store, HashEmbedder(), row, reader_of(row, settings, tmp_path), ingest_limits(settings)
        )

    assert raised.value.code == "source_not_found"
    assert "branch 'release' does not exist" in str(raised.value)
    assert await current(store, unique_tenant) == {}


async def test_an_unreachable_repository_is_a_clear_error(
    store: Store, settings: Settings, unique_tenant: str, tmp_path: Path
) -> None:
    row = await add_source(
        store,
        tenant=unique_tenant,
        name="gone",
        kind="git",
        settings={"url": (tmp_path / "nowhere").as_uri()},
        credential=None,
        webhook_secret={"secret": "s"},
    )

    with pytest.raises(SourceSyncError) as raised:
        await sync_source(
            store, HashEmbedder(), row, reader_of(row, settings, tmp_path), ingest_limits(settings)
        )

    assert raised.value.code == "source_unreachable"
    assert f"source '{unique_tenant}/gone'" in str(raised.value)
