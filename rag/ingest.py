"""Ingestion: runbook files → versioned documents and embedded chunks, incrementally.

A document is keyed by (tenant, document_id) and the SHA-256 of its bytes. Unchanged files
are skipped before anything is embedded; a changed one becomes a new version whose
predecessor is marked superseded in the same transaction, so a concurrent reader sees the old
version or the new one, never neither.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rag.chunking import chunk_runbook
from rag.embedding import Embedder, Vectors
from rag.errors import IngestFileError
from rag.sources import (
    SourceFile,
    TenantFolder,
    content_sha256,
    discover_tenants,
    list_runbook_files,
    parse_source,
    read_text,
)
from rag.staleness import record_update_dates
from rag.store import Store

logger = logging.getLogger(__name__)

ProgressCallback = Callable[[int, int], None]


@dataclass(frozen=True)
class IngestLimits:
    max_file_bytes: int
    chunk_max_chars: int
    chunk_overlap_chars: int
    embed_group_chunks: int = 128


@dataclass(frozen=True)
class IngestFailure:
    path: str
    reason: str


@dataclass
class IngestReport:
    tenants: list[str] = field(default_factory=list)
    added: int = 0
    changed: int = 0
    unchanged: int = 0
    superseded: int = 0
    removed: int = 0
    chunks_written: int = 0
    failed: list[IngestFailure] = field(default_factory=list)
    seconds: float = 0.0
    embed_seconds: float = 0.0

    def as_json(self) -> dict[str, Any]:
        return {
            "tenants": self.tenants,
            "documents": {
                "added": self.added,
                "changed": self.changed,
                "unchanged": self.unchanged,
                "superseded": self.superseded,
                "removed": self.removed,
                "failed": len(self.failed),
            },
            "chunks_written": self.chunks_written,
            "failures": [{"path": f.path, "reason": f.reason} for f in self.failed],
            "seconds": round(self.seconds, 3),
            "embed_seconds": round(self.embed_seconds, 3),
        }


@dataclass(frozen=True)
class PendingDocument:
    """A file that needs a new version: its chunks, and the texts to embed for them."""

    tenant: str
    source: SourceFile
    is_new: bool
    chunk_contents: tuple[tuple[tuple[str, ...], str], ...]
    embed_texts: tuple[str, ...]


@dataclass(frozen=True)
class StoredVersion:
    version: int
    sha256: str
    embedding_model: str
    superseded: bool
    source_path: str


_CURRENT_STATE = """
SELECT DISTINCT ON (document_id)
       document_id, version, sha256, embedding_model, superseded, source_path
FROM documents WHERE tenant_id = %(tenant)s
ORDER BY document_id, version DESC
"""

_SUPERSEDE_DOCUMENT = """
UPDATE documents SET superseded = true
WHERE tenant_id = %(tenant)s AND document_id = %(document_id)s AND NOT superseded
"""

_SUPERSEDE_CHUNKS = """
UPDATE chunks SET superseded = true
WHERE tenant_id = %(tenant)s AND document_id = %(document_id)s AND NOT superseded
"""

_INSERT_DOCUMENT = """
INSERT INTO documents (tenant_id, document_id, version, sha256, source_path, title, service,
                       tags, owner, url, updated, superseded, superseded_by, embedding_model)
SELECT %(tenant)s, %(document_id)s, coalesce(max(version), 0) + 1, %(sha256)s, %(source_path)s,
       %(title)s, %(service)s, %(tags)s, %(owner)s, %(url)s, %(updated)s, %(retired)s,
       %(superseded_by)s, %(embedding_model)s
FROM documents WHERE tenant_id = %(tenant)s AND document_id = %(document_id)s
RETURNING version
"""

_LOCK_DOCUMENT = """
SELECT pg_advisory_xact_lock(hashtextextended(%(tenant)s || '/' || %(document_id)s, 0))
"""

# Title above headings above body in keyword ranking (weights A, B, D).
_INSERT_CHUNK = """
INSERT INTO chunks (tenant_id, document_id, version, ordinal, heading_path, content, superseded,
                    service, embedding, embedding_model, embedding_dim, tsv)
VALUES (%(tenant)s, %(document_id)s, %(version)s, %(ordinal)s, %(heading_path)s, %(content)s,
        %(retired)s, %(service)s, %(embedding)s, %(embedding_model)s, %(embedding_dim)s,
        setweight(to_tsvector('english', %(title)s), 'A')
        || setweight(to_tsvector('english', %(headings)s), 'B')
        || setweight(to_tsvector('english', %(content)s), 'D'))
"""


def embed_text(title: str, heading_path: Sequence[str], content: str) -> str:
    """What is embedded for a chunk: title and breadcrumb give a short chunk its context."""
    breadcrumb = " › ".join(dict.fromkeys((title, *heading_path)))
    return f"{breadcrumb}\n\n{content}"


async def ingest_path(
    store: Store,
    embedder: Embedder,
    root: Path,
    *,
    tenant: str | None,
    prune: bool,
    limits: IngestLimits,
    on_progress: ProgressCallback | None = None,
) -> IngestReport:
    started = time.perf_counter()
    report = IngestReport()
    folders = discover_tenants(root, tenant)
    report.tenants = [f.tenant for f in folders]
    await store.ensure_vector_index(embedder.dim)

    pending: list[PendingDocument] = []
    per_tenant_seen: dict[str, tuple[set[str], set[str]]] = {}
    total_files = 0
    for folder in folders:
        await _ensure_tenant(store, folder.tenant)
        stored = await _load_state(store, folder.tenant)
        scan = await asyncio.to_thread(_scan_tenant, folder, stored, embedder.model_id, limits)
        total_files += scan.files
        report.unchanged += scan.unchanged
        report.failed.extend(scan.failed)
        per_tenant_seen[folder.tenant] = (scan.seen_ids, scan.failed_paths)
        pending.extend(
            _prepare(folder.tenant, source, source.document_id not in stored, limits)
            for source in scan.changed
        )

    done_files = total_files - len(pending)
    if on_progress is not None:
        on_progress(done_files, total_files)
    async for group, vectors, seconds in _embedded_groups(embedder, pending, limits):
        report.embed_seconds += seconds
        for document, document_vectors in zip(group, vectors, strict=True):
            await _write_version(store, embedder, document, document_vectors, report)
            done_files += 1
            if on_progress is not None:
                on_progress(done_files, total_files)

    await record_update_dates(store, folders)
    if prune:
        for tenant_id, (seen_ids, failed_paths) in per_tenant_seen.items():
            report.removed += await _prune(store, tenant_id, seen_ids, failed_paths)
    report.seconds = time.perf_counter() - started
    logger.info(
        "ingested %s: %d added, %d changed, %d unchanged, %d chunks in %.2fs",
        ",".join(report.tenants),
        report.added,
        report.changed,
        report.unchanged,
        report.chunks_written,
        report.seconds,
    )
    return report


@dataclass
class TenantScan:
    """One tenant folder read against what is stored: what changed, what failed, what is seen."""

    files: int = 0
    unchanged: int = 0
    changed: list[SourceFile] = field(default_factory=list)
    failed: list[IngestFailure] = field(default_factory=list)
    seen_ids: set[str] = field(default_factory=set)
    failed_paths: set[str] = field(default_factory=set)


def _scan_tenant(
    folder: TenantFolder, stored: dict[str, StoredVersion], model_id: str, limits: IngestLimits
) -> TenantScan:
    """Read and hash every file; parse only those whose bytes changed (runs in a thread)."""
    scan = TenantScan()
    current_by_path = {
        v.source_path: (document_id, v) for document_id, v in stored.items() if not v.superseded
    }
    owners: dict[str, str] = {}
    for path in list_runbook_files(folder.root):
        scan.files += 1
        relative = path.relative_to(folder.root).as_posix()
        try:
            raw, text = read_text(path, max_bytes=limits.max_file_bytes)
            known = current_by_path.get(relative)
            if (
                known is not None
                and known[1].sha256 == content_sha256(raw)
                and known[1].embedding_model == model_id
                and known[0] not in owners
            ):
                # Fast path: same bytes at the same path as the current version; no parse.
                owners[known[0]] = relative
                scan.seen_ids.add(known[0])
                scan.unchanged += 1
                continue
            source = parse_source(folder.root, path, raw, text)
            if source.document_id in owners:
                raise IngestFileError(
                    path,
                    f"document id {source.document_id!r} is also used by "
                    f"{owners[source.document_id]}",
                )
        except IngestFileError as exc:
            scan.failed.append(IngestFailure(str(exc.path), exc.reason))
            scan.failed_paths.add(relative)
            continue
        owners[source.document_id] = relative
        scan.seen_ids.add(source.document_id)
        previous = stored.get(source.document_id)
        retired = source.runbook.frontmatter.superseded_by is not None
        if (
            previous is not None
            and previous.sha256 == source.sha256
            and previous.embedding_model == model_id
            and previous.superseded == retired
        ):
            scan.unchanged += 1
        else:
            scan.changed.append(source)
    return scan


def _prepare(
    tenant: str, source: SourceFile, is_new: bool, limits: IngestLimits
) -> PendingDocument:
    drafts = chunk_runbook(
        source.runbook, max_chars=limits.chunk_max_chars, overlap_chars=limits.chunk_overlap_chars
    )
    title = source.runbook.title
    return PendingDocument(
        tenant=tenant,
        source=source,
        is_new=is_new,
        chunk_contents=tuple((d.heading_path, d.content) for d in drafts),
        embed_texts=tuple(embed_text(title, d.heading_path, d.content) for d in drafts),
    )


def _groups(pending: list[PendingDocument], size: int) -> Iterator[list[PendingDocument]]:
    group: list[PendingDocument] = []
    count = 0
    for document in pending:
        group.append(document)
        count += len(document.embed_texts)
        if count >= size:
            yield group
            group, count = [], 0
    if group:
        yield group


async def _embed_group(
    embedder: Embedder, group: list[PendingDocument]
) -> tuple[list[PendingDocument], list[Vectors], float]:
    started = time.perf_counter()
    texts = [text for document in group for text in document.embed_texts]
    matrix = await embedder.embed(texts)
    per_document: list[Vectors] = []
    offset = 0
    for document in group:
        per_document.append(matrix[offset : offset + len(document.embed_texts)])
        offset += len(document.embed_texts)
    return group, per_document, time.perf_counter() - started


async def _embedded_groups(
    embedder: Embedder, pending: list[PendingDocument], limits: IngestLimits
) -> AsyncIterator[tuple[list[PendingDocument], list[Vectors], float]]:
    """Yield embedded groups; the next group embeds in its thread while the caller writes."""
    groups = list(_groups(pending, limits.embed_group_chunks))
    if not groups:
        return
    upcoming = asyncio.ensure_future(_embed_group(embedder, groups[0]))
    try:
        for index in range(len(groups)):
            result = await upcoming
            if index + 1 < len(groups):
                upcoming = asyncio.ensure_future(_embed_group(embedder, groups[index + 1]))
            yield result
    finally:
        upcoming.cancel()


async def _ensure_tenant(store: Store, tenant: str) -> None:
    async with store.pool.connection() as conn:
        await conn.execute(
            "INSERT INTO tenants (tenant_id) VALUES (%s) ON CONFLICT DO NOTHING", (tenant,)
        )


async def _load_state(store: Store, tenant: str) -> dict[str, StoredVersion]:
    async with store.pool.connection() as conn:
        cur = await conn.execute(_CURRENT_STATE, {"tenant": tenant})
        rows = await cur.fetchall()
    return {row[0]: StoredVersion(*row[1:]) for row in rows}


async def _write_version(
    store: Store,
    embedder: Embedder,
    document: PendingDocument,
    vectors: Vectors,
    report: IngestReport,
) -> None:
    source = document.source
    meta = source.runbook.frontmatter
    retired = meta.superseded_by is not None
    params: dict[str, Any] = {
        "tenant": document.tenant,
        "document_id": source.document_id,
        "sha256": source.sha256,
        "source_path": source.relative_path,
        "title": source.runbook.title,
        "service": meta.service,
        "tags": list(meta.tags),
        "owner": meta.owner,
        "url": meta.url,
        "updated": meta.updated,
        "retired": retired,
        "superseded_by": meta.superseded_by,
        "embedding_model": embedder.model_id,
    }
    async with store.pool.connection() as conn, conn.transaction():
        # Serialise writers of one document so version numbers never collide.
        await conn.execute(_LOCK_DOCUMENT, params)
        replaced = await conn.execute(_SUPERSEDE_DOCUMENT, params)
        await conn.execute(_SUPERSEDE_CHUNKS, params)
        cur = await conn.execute(_INSERT_DOCUMENT, params)
        row = await cur.fetchone()
        assert row is not None
        version = row[0]
        chunk_rows = [
            {
                **params,
                "version": version,
                "ordinal": ordinal,
                "heading_path": list(heading_path),
                "headings": " ".join(heading_path),
                "content": content,
                "embedding": vector,
                "embedding_dim": embedder.dim,
            }
            for ordinal, ((heading_path, content), vector) in enumerate(
                zip(document.chunk_contents, vectors, strict=True)
            )
        ]
        async with conn.cursor() as cursor:
            await cursor.executemany(_INSERT_CHUNK, chunk_rows)
    report.chunks_written += len(document.chunk_contents)
    report.superseded += replaced.rowcount
    if retired:
        report.superseded += 1
    elif document.is_new:
        report.added += 1
    else:
        report.changed += 1


async def _prune(store: Store, tenant: str, seen_ids: set[str], failed_paths: set[str]) -> int:
    """Retire current documents whose files are gone; a file that failed to read keeps its own."""
    async with store.pool.connection() as conn, conn.transaction():
        cur = await conn.execute(
            """
            UPDATE documents SET superseded = true
            WHERE tenant_id = %(tenant)s AND NOT superseded
              AND NOT (document_id = ANY(%(seen)s)) AND NOT (source_path = ANY(%(failed)s))
            RETURNING document_id
            """,
            {"tenant": tenant, "seen": sorted(seen_ids), "failed": sorted(failed_paths)},
        )
        gone = [row[0] for row in await cur.fetchall()]
        await conn.execute(
            "UPDATE chunks SET superseded = true "
            "WHERE tenant_id = %(tenant)s AND NOT superseded AND document_id = ANY(%(gone)s)",
            {"tenant": tenant, "gone": gone},
        )
    return len(gone)
