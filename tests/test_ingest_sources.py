"""What ingestion reads: never through a symbolic link, never outside the tenant folder; empty
files and section pages are skipped and listed, unreadable files are failures that do not stop it.
"""

from __future__ import annotations

import socket
from pathlib import Path

from rag import IngestLimits, Settings, Store, ingest_limits, ingest_path
from tests.hash_embedder import HashEmbedder

RUNBOOK = "# Disk full\n\n## Mitigation\nDelete old WAL segments only after a verified backup.\n"
SECRET = "# Globex secret\n\nThe root password for the billing database is swordfish-42.\n"


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def limits_of(settings: Settings) -> IngestLimits:
    return ingest_limits(settings)


async def current_documents(store: Store, tenant: str) -> dict[str, str]:
    async with store.pool.connection() as conn:
        cur = await conn.execute(
            "SELECT d.document_id, string_agg(c.content, ' ') FROM documents d "
            "JOIN chunks c USING (tenant_id, document_id, version) "
            "WHERE d.tenant_id = %s AND NOT d.superseded GROUP BY d.document_id",
            (tenant,),
        )
        return {row[0]: row[1] for row in await cur.fetchall()}


async def test_a_link_to_another_tenants_file_is_skipped_not_ingested(
    store: Store, settings: Settings, unique_tenant: str, tmp_path: Path
) -> None:
    acme, globex = f"{unique_tenant}-acme", f"{unique_tenant}-globex"
    write(tmp_path / acme / "disk.md", RUNBOOK)
    write(tmp_path / globex / "secret.md", SECRET)
    (tmp_path / acme / "leak.md").symlink_to(Path("..") / globex / "secret.md")

    report = await ingest_path(
        store, HashEmbedder(), tmp_path, tenant=None, prune=False, limits=limits_of(settings)
    )

    assert set(await current_documents(store, acme)) == {"disk"}
    assert set(await current_documents(store, globex)) == {"secret"}
    assert [(Path(s.path).name, s.reason) for s in report.skipped] == [
        ("leak.md", "symbolic link (not followed)")
    ]
    assert report.failed == []


async def test_a_link_to_a_host_file_is_skipped_not_ingested(
    store: Store, settings: Settings, unique_tenant: str, tmp_path: Path
) -> None:
    root = tmp_path / "runbooks"
    write(root / "disk.md", RUNBOOK)
    host_file = write(tmp_path / "host" / "passwords.md", SECRET)
    (root / "passwords.md").symlink_to(host_file)
    (root / "etc-passwd.md").symlink_to("/etc/passwd")

    report = await ingest_path(
        store, HashEmbedder(), root, tenant=unique_tenant, prune=False, limits=limits_of(settings)
    )

    documents = await current_documents(store, unique_tenant)
    assert set(documents) == {"disk"}
    assert not any("swordfish" in text or "root:" in text for text in documents.values())
    assert sorted(Path(s.path).name for s in report.skipped) == ["etc-passwd.md", "passwords.md"]


async def test_a_symlinked_folder_is_skipped_with_everything_under_it(
    store: Store, settings: Settings, unique_tenant: str, tmp_path: Path
) -> None:
    root = tmp_path / "runbooks"
    write(root / "disk.md", RUNBOOK)
    write(tmp_path / "elsewhere" / "secret.md", SECRET)
    (root / "shared").symlink_to(tmp_path / "elsewhere", target_is_directory=True)

    report = await ingest_path(
        store, HashEmbedder(), root, tenant=unique_tenant, prune=False, limits=limits_of(settings)
    )

    assert set(await current_documents(store, unique_tenant)) == {"disk"}
    assert [(Path(s.path).name, s.reason) for s in report.skipped] == [
        ("shared", "symbolic link (not followed)")
    ]


async def test_a_symlinked_tenant_folder_is_skipped(
    store: Store, settings: Settings, unique_tenant: str, tmp_path: Path
) -> None:
    root = tmp_path / "tenants"
    write(root / unique_tenant / "disk.md", RUNBOOK)
    write(tmp_path / "other" / "secret.md", SECRET)
    (root / f"{unique_tenant}-link").symlink_to(tmp_path / "other", target_is_directory=True)

    report = await ingest_path(
        store, HashEmbedder(), root, tenant=None, prune=False, limits=limits_of(settings)
    )

    assert report.tenants == [unique_tenant]
    assert await current_documents(store, f"{unique_tenant}-link") == {}
    assert [Path(s.path).name for s in report.skipped] == [f"{unique_tenant}-link"]


def test_a_file_resolving_outside_the_tenant_folder_is_refused(tmp_path: Path) -> None:
    from rag.errors import IngestFileError
    from rag.ingest.files import read_runbook_file

    root = tmp_path / "runbooks"
    root.mkdir()
    write(tmp_path / "elsewhere" / "secret.md", SECRET)
    (root / "shared").symlink_to(tmp_path / "elsewhere", target_is_directory=True)

    try:
        read_runbook_file(root, root / "shared" / "secret.md", max_bytes=10_000)
    except IngestFileError as exc:
        assert exc.reason == "resolves outside the tenant folder"
    else:
        raise AssertionError("a path through a symlinked folder was read")


async def test_empty_files_and_section_pages_are_skipped_and_the_run_succeeds(
    store: Store, settings: Settings, unique_tenant: str, tmp_path: Path
) -> None:
    # The shape of the Prometheus-Operator runbooks: Hugo section pages with frontmatter only.
    write(tmp_path / "_index.md", "---\nbookHidden: true\n---\n")
    write(tmp_path / "node" / "_index.md", "---\ntitle: node\nweight: 10\n---\n\n")
    write(tmp_path / "node" / "empty.md", "")
    write(tmp_path / "node" / "blank.md", "  \n\n")
    write(tmp_path / "node" / "disk.md", RUNBOOK)

    report = await ingest_path(
        store,
        HashEmbedder(),
        tmp_path,
        tenant=unique_tenant,
        prune=False,
        limits=limits_of(settings),
    )

    assert (report.added, report.failed) == (1, [])
    assert {Path(s.path).relative_to(tmp_path).as_posix(): s.reason for s in report.skipped} == {
        "_index.md": "no text after the frontmatter (a section page)",
        "node/_index.md": "no text after the frontmatter (a section page)",
        "node/empty.md": "empty file",
        "node/blank.md": "empty file",
    }
    summary = report.as_json()
    assert summary["documents"]["skipped"] == 4 and summary["documents"]["failed"] == 0
    assert len(summary["skipped"]) == 4 and summary["failures"] == []


async def test_an_unreadable_file_is_a_failure_and_the_rest_is_ingested(
    store: Store, settings: Settings, unique_tenant: str, tmp_path: Path
) -> None:
    write(tmp_path / "disk.md", RUNBOOK)
    # Opening a socket fails with an OSError even for root, which permissions would not.
    listener = socket.socket(socket.AF_UNIX)
    try:
        listener.bind(str(tmp_path / "s.md"))
        report = await ingest_path(
            store,
            HashEmbedder(),
            tmp_path,
            tenant=unique_tenant,
            prune=False,
            limits=limits_of(settings),
        )
    finally:
        listener.close()

    assert report.added == 1
    assert [Path(f.path).name for f in report.failed] == ["s.md"]
    assert report.failed[0].reason == "cannot read: No such device or address"
