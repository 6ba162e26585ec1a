from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from rag import (
    FastEmbedder,
    IngestLimits,
    ModelMismatchError,
    Settings,
    Store,
    ingest_limits,
    ingest_path,
)
from rag.retrieval.retrieve import ScopeHints, search
from tests.hash_embedder import HashEmbedder

FAILOVER = """---
title: Database primary failover
service: postgres
owner: team-data
url: https://wiki.example/db/failover
tags: [database, failover]
updated: 2026-03-01
---
# Database primary failover

## Symptoms
Writes fail with `cannot execute INSERT in a read-only transaction` and the primary is unreachable.

## Mitigation
```bash
# check cluster state before anything else
patronictl -c /etc/patroni.yml list
```
Promote the healthiest replica with patronictl failover and confirm the new leader.
"""

CERTS = """# TLS certificate expiry

## Diagnosis
Clients report `x509: certificate has expired or is not yet valid`. Check the expiry date with
openssl s_client against the load balancer.

## Mitigation
Renew the certificate through cert-manager and restart the ingress pods.
"""


def write(root: Path, relative: str, text: str | bytes) -> Path:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def limits(settings: Settings) -> IngestLimits:
    return ingest_limits(settings)


async def current_chunks(store: Store, tenant: str) -> list[tuple[str, int, list[str], str]]:
    async with store.pool.connection() as conn:
        cur = await conn.execute(
            "SELECT document_id, version, heading_path, content FROM chunks "
            "WHERE tenant_id = %s AND NOT superseded ORDER BY document_id, ordinal",
            (tenant,),
        )
        return [tuple(row) for row in await cur.fetchall()]


async def test_second_ingest_of_the_same_folder_changes_nothing(
    store: Store, embedder: FastEmbedder, limits: IngestLimits, unique_tenant: str, tmp_path: Path
) -> None:
    write(tmp_path, "db/failover.md", FAILOVER)
    write(tmp_path, "tls/certs.md", CERTS)
    first = await ingest_path(
        store, embedder, tmp_path, tenant=unique_tenant, prune=False, limits=limits
    )
    assert (first.added, first.unchanged, first.failed) == (2, 0, [])
    assert first.chunks_written > 0
    before = await current_chunks(store, unique_tenant)

    second = await ingest_path(
        store, embedder, tmp_path, tenant=unique_tenant, prune=False, limits=limits
    )
    assert (second.added, second.changed, second.unchanged, second.chunks_written) == (0, 0, 2, 0)
    assert await current_chunks(store, unique_tenant) == before


async def test_edited_file_becomes_a_new_version_and_the_old_text_is_never_returned(
    store: Store, embedder: FastEmbedder, limits: IngestLimits, unique_tenant: str, tmp_path: Path
) -> None:
    path = write(tmp_path, "db/failover.md", FAILOVER)
    await ingest_path(store, embedder, tmp_path, tenant=unique_tenant, prune=False, limits=limits)
    path.write_text(
        FAILOVER.replace("patronictl failover", "the failover-o-matic 3000"), encoding="utf-8"
    )

    report = await ingest_path(
        store, embedder, tmp_path, tenant=unique_tenant, prune=False, limits=limits
    )
    assert (report.changed, report.superseded) == (1, 1)
    chunks = await current_chunks(store, unique_tenant)
    assert {version for _, version, _, _ in chunks} == {2}
    question = "Promote the healthiest replica with patronictl failover"
    vector = (await embedder.embed([question]))[0]
    found = await search(
        store,
        tenant=unique_tenant,
        question=question,
        embedding=vector,
        model=embedder.model_id,
        service=None,
        candidates=40,
        hints=ScopeHints(),
    )
    assert found.evidence, "the new version is retrievable"
    assert all(e.version == 2 for e in found.evidence)
    assert not any("patronictl failover" in e.content for e in found.evidence)


async def test_readers_see_the_old_or_the_new_version_never_neither(
    store: Store, limits: IngestLimits, unique_tenant: str, tmp_path: Path
) -> None:
    embedder = HashEmbedder(dim=16)
    path = write(tmp_path, "db/failover.md", FAILOVER)
    await ingest_path(store, embedder, tmp_path, tenant=unique_tenant, prune=False, limits=limits)
    observed: set[int] = set()

    async def watch() -> None:
        for _ in range(200):
            async with store.pool.connection() as conn:
                cur = await conn.execute(
                    "SELECT count(DISTINCT version) FROM chunks "
                    "WHERE tenant_id = %s AND NOT superseded",
                    (unique_tenant,),
                )
                row = await cur.fetchone()
            assert row is not None
            observed.add(int(row[0]))
            await asyncio.sleep(0)

    async def edit() -> None:
        for round_number in range(5):
            path.write_text(FAILOVER + f"\nRevision {round_number}.\n", encoding="utf-8")
            await ingest_path(
                store, embedder, tmp_path, tenant=unique_tenant, prune=False, limits=limits
            )

    await asyncio.gather(watch(), edit())
    assert observed == {1}


async def test_prune_retires_documents_whose_files_are_gone(
    store: Store, embedder: FastEmbedder, limits: IngestLimits, unique_tenant: str, tmp_path: Path
) -> None:
    write(tmp_path, "db/failover.md", FAILOVER)
    certs = write(tmp_path, "tls/certs.md", CERTS)
    await ingest_path(store, embedder, tmp_path, tenant=unique_tenant, prune=False, limits=limits)
    certs.unlink()

    kept = await ingest_path(
        store, embedder, tmp_path, tenant=unique_tenant, prune=False, limits=limits
    )
    assert kept.removed == 0
    assert {d for d, *_ in await current_chunks(store, unique_tenant)} == {
        "db/failover",
        "tls/certs",
    }

    pruned = await ingest_path(
        store, embedder, tmp_path, tenant=unique_tenant, prune=True, limits=limits
    )
    assert pruned.removed == 1
    assert {d for d, *_ in await current_chunks(store, unique_tenant)} == {"db/failover"}


async def test_bad_files_are_reported_with_reasons_and_the_rest_is_ingested(
    store: Store, limits: IngestLimits, unique_tenant: str, tmp_path: Path
) -> None:
    write(tmp_path, "good.md", CERTS)
    write(tmp_path, "bad-yaml.md", "---\ntitle: [unclosed\n---\n# Body\ntext\n")
    write(tmp_path, "bad-field.md", "---\ntags: {a: 1}\n---\n# Body\ntext\n")
    write(tmp_path, "latin1.md", "# Caf\xe9\n".encode("latin-1"))
    write(tmp_path, "binary.md", b"\x89PNG\x00\x00\x00")
    write(tmp_path, "empty.md", "   \n")
    write(tmp_path, "huge.md", "# Huge\n" + "x" * (limits.max_file_bytes + 1))
    write(tmp_path, "dupe-a.md", "---\nid: same\n---\n# A\nalpha text here\n")
    write(tmp_path, "dupe-b.md", "---\nid: same\n---\n# B\nbeta text here\n")

    report = await ingest_path(
        store, HashEmbedder(), tmp_path, tenant=unique_tenant, prune=False, limits=limits
    )
    reasons = {Path(f.path).name: f.reason for f in report.failed}
    assert report.added == 2  # good.md and the first owner of id "same"
    assert set(reasons) == {
        "bad-yaml.md",
        "bad-field.md",
        "latin1.md",
        "binary.md",
        "huge.md",
        "dupe-b.md",
    }
    assert "frontmatter" in reasons["bad-yaml.md"]
    assert "tags" in reasons["bad-field.md"]
    assert "UTF-8" in reasons["latin1.md"]
    assert "binary" in reasons["binary.md"]
    # An empty file is no broken runbook: it is listed as skipped, not failed.
    assert [(Path(s.path).name, s.reason) for s in report.skipped] == [("empty.md", "empty file")]
    assert "cap" in reasons["huge.md"]
    assert "dupe-a.md" in reasons["dupe-b.md"]


async def test_headings_inside_code_fences_do_not_split_sections(
    store: Store, limits: IngestLimits, unique_tenant: str, tmp_path: Path
) -> None:
    write(tmp_path, "db/failover.md", FAILOVER)
    await ingest_path(
        store, HashEmbedder(), tmp_path, tenant=unique_tenant, prune=False, limits=limits
    )
    paths = {
        tuple(heading_path) for _, _, heading_path, _ in await current_chunks(store, unique_tenant)
    }
    assert paths == {
        ("Database primary failover", "Symptoms"),
        ("Database primary failover", "Mitigation"),
    }


async def test_asking_with_another_model_than_the_stored_one_is_a_clear_error(
    store: Store,
    embedder: FastEmbedder,
    settings: Settings,
    limits: IngestLimits,
    unique_tenant: str,
    tmp_path: Path,
) -> None:
    from rag import RagService
    from rag.answering.answerers import ExtractiveAnswerer

    write(tmp_path, "tls/certs.md", CERTS)
    await ingest_path(
        store, HashEmbedder(), tmp_path, tenant=unique_tenant, prune=False, limits=limits
    )
    service = RagService(
        store=store, embedder=embedder, answerer=ExtractiveAnswerer(), settings=settings
    )
    with pytest.raises(ModelMismatchError, match="re-run `runbook ingest`"):
        await service.retrieve(unique_tenant, "certificate expired")
    result = await service.ask(unique_tenant, "certificate expired")
    assert (result.status, result.reason_code) == ("error", "embedding_model_mismatch")


async def test_ingesting_with_another_model_re_embeds_every_document(
    store: Store, embedder: FastEmbedder, limits: IngestLimits, unique_tenant: str, tmp_path: Path
) -> None:
    write(tmp_path, "db/failover.md", FAILOVER)
    write(tmp_path, "tls/certs.md", CERTS)
    await ingest_path(
        store, HashEmbedder(dim=16), tmp_path, tenant=unique_tenant, prune=False, limits=limits
    )
    report = await ingest_path(
        store, embedder, tmp_path, tenant=unique_tenant, prune=False, limits=limits
    )
    assert (report.changed, report.unchanged) == (2, 0)
    async with store.pool.connection() as conn:
        cur = await conn.execute(
            "SELECT DISTINCT embedding_model, embedding_dim FROM chunks "
            "WHERE tenant_id = %s AND NOT superseded",
            (unique_tenant,),
        )
        assert await cur.fetchall() == [(embedder.model_id, embedder.dim)]


# A Hugo page: front-matter title, sections from `##`, no level-1 heading.
HUGO_PAGE = """---
title: Networking problems
---
Techniques for common traffic problems.

## Requests are rejected by Envoy
Inspect the sidecar's access log for the response flag: `NR` means no route is configured.

## 503 errors after setting a destination rule
Check that the destination rule's TLS mode matches the mesh's mutual TLS setting.
"""

# What a parser before PARSE_REVISION 2 stored: a section's path without the title at its root.
_STORE_AS_REVISION_1 = (
    "UPDATE chunks SET heading_path = heading_path[2:] "
    "WHERE tenant_id = %(tenant)s AND cardinality(heading_path) > 1",
    "UPDATE documents SET parse_revision = 1 WHERE tenant_id = %(tenant)s",
)


async def stored_revisions(store: Store, tenant: str) -> list[tuple[str, int, int]]:
    async with store.pool.connection() as conn:
        cur = await conn.execute(
            "SELECT document_id, version, parse_revision FROM documents "
            "WHERE tenant_id = %s ORDER BY document_id, version",
            (tenant,),
        )
        return [tuple(row) for row in await cur.fetchall()]


async def test_a_document_stored_by_an_older_parser_gets_its_heading_paths_without_re_embedding(
    store: Store, limits: IngestLimits, unique_tenant: str, tmp_path: Path
) -> None:
    write(tmp_path, "mesh/network-issues.md", HUGO_PAGE)
    embedder = HashEmbedder()
    await ingest_path(store, embedder, tmp_path, tenant=unique_tenant, prune=False, limits=limits)
    current = await current_chunks(store, unique_tenant)
    assert [path for _, _, path, _ in current] == [
        ["Networking problems"],
        ["Networking problems", "Requests are rejected by Envoy"],
        ["Networking problems", "503 errors after setting a destination rule"],
    ]
    async with store.pool.connection() as conn:
        for statement in _STORE_AS_REVISION_1:
            await conn.execute(statement, {"tenant": unique_tenant})
    assert (await current_chunks(store, unique_tenant))[1][2] == ["Requests are rejected by Envoy"]

    report = await ingest_path(
        store, embedder, tmp_path, tenant=unique_tenant, prune=False, limits=limits
    )

    assert (report.added, report.changed, report.unchanged, report.chunks_written) == (0, 0, 1, 0)
    assert await current_chunks(store, unique_tenant) == current
    assert await stored_revisions(store, unique_tenant) == [("mesh/network-issues", 1, 2)]
    again = await ingest_path(
        store, embedder, tmp_path, tenant=unique_tenant, prune=False, limits=limits
    )
    assert (again.unchanged, again.chunks_written) == (1, 0)


async def test_an_older_document_whose_chunks_the_parser_now_cuts_differently_is_ingested_again(
    store: Store, limits: IngestLimits, unique_tenant: str, tmp_path: Path
) -> None:
    write(tmp_path, "mesh/network-issues.md", HUGO_PAGE)
    embedder = HashEmbedder()
    await ingest_path(store, embedder, tmp_path, tenant=unique_tenant, prune=False, limits=limits)
    async with store.pool.connection() as conn:
        for statement in _STORE_AS_REVISION_1:
            await conn.execute(statement, {"tenant": unique_tenant})
        await conn.execute(
            "UPDATE chunks SET content = content || ' (cut by an older parser)' "
            "WHERE tenant_id = %s AND ordinal = 2",
            (unique_tenant,),
        )

    report = await ingest_path(
        store, embedder, tmp_path, tenant=unique_tenant, prune=False, limits=limits
    )

    assert (report.changed, report.unchanged, report.chunks_written) == (1, 0, 3)
    assert await stored_revisions(store, unique_tenant) == [
        ("mesh/network-issues", 1, 1),
        ("mesh/network-issues", 2, 2),
    ]
    current = await current_chunks(store, unique_tenant)
    assert [path for _, _, path, _ in current][1] == [
        "Networking problems",
        "Requests are rejected by Envoy",
    ]
    assert not any("older parser" in content for _, _, _, content in current)
