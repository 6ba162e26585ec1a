"""One sync of one source, for every kind: compare, read what changed, embed, publish at once.

Under the tenant's ingest lock: the reader lists the source's items with their versions; only
items whose version differs from the last sync's are read, parsed, embedded and written, a
batch of ``IngestLimits.sync_batch_items`` items or ``sync_batch_bytes`` bytes at a time, so
memory holds a batch or two (page bodies, runbooks, vectors) rather than the whole source.
Every batch is written inside one transaction that also retires the documents of gone items
(through the prune guard) and records the source's item state and outcome: a sync that fails
anywhere before that commit changes nothing — no document retired, no tenant half-written —
and questions meanwhile see the tenant as it was. That transaction holds one advisory lock
however many documents it writes (see rag/ingest/write.py), so a space of thousands of pages
never runs out of the server's lock slots.
"""

from __future__ import annotations

import logging
import time
import uuid
from contextlib import aclosing
from dataclasses import dataclass, field
from pathlib import Path

from psycopg import AsyncConnection
from psycopg.rows import TupleRow

from rag.embedding.embedder import Embedder, Vectors
from rag.formats.markdown import PARSE_REVISION
from rag.formats.runbook import ParsedRunbook
from rag.ingest.embed import PendingDocument, embedded_groups, prepare_document
from rag.ingest.files import SourceFile
from rag.ingest.guard import documents_to_prune
from rag.ingest.report import IngestFailure, IngestLimits, IngestReport, IngestSkip
from rag.ingest.scan import StoredVersion, TenantScan, load_stored_state
from rag.ingest.write import ensure_tenant, retire_documents_on, write_version_on
from rag.sources.item_names import storable_listing
from rag.sources.reader import (
    SourceDocument,
    SourceListing,
    SourceRead,
    SourceReader,
    read_in_batches,
)
from rag.sources.rows import SourceRow, record_synced
from rag.sources.sync_report import ItemState, SyncReport
from rag.store.connection import Store
from rag.store.tenant_locks import hold_tenant_locks

logger = logging.getLogger(__name__)


_ITEMS = "SELECT item_id, version, document_id, skipped FROM source_items WHERE source_id = %s"

# Document ids the tenant's other sources publish: two sources never overwrite each other.
_TAKEN = """
SELECT i.document_id, s.name FROM source_items AS i JOIN sources AS s USING (source_id)
WHERE s.tenant_id = %(tenant)s AND s.source_id <> %(id)s AND i.document_id IS NOT NULL
"""

_SET_UPDATED_SOURCE = """
UPDATE documents SET updated_source = %(origin)s
WHERE tenant_id = %(tenant)s AND document_id = %(document_id)s AND NOT superseded
  AND updated IS NOT NULL
"""

_INSERT_ITEM = """
INSERT INTO source_items (source_id, item_id, version, document_id, skipped)
VALUES (%(id)s, %(item)s, %(version)s, %(document_id)s, %(skipped)s)
"""


async def sync_source(
    store: Store,
    embedder: Embedder,
    source: SourceRow,
    reader: SourceReader,
    limits: IngestLimits,
    *,
    force: bool = False,
) -> SyncReport:
    """Sync ``source`` through ``reader``; ``force`` lifts the prune guard.

    Raises ``SourceSyncError`` (source unreadable) or ``PruneRefusedError`` with nothing changed.
    """
    started = time.perf_counter()
    tenant = source.tenant_id
    report = SyncReport(tenant=tenant, source=source.name)
    async with hold_tenant_locks(store, [tenant]):
        await ensure_tenant(store, tenant)
        state = await _load_items(store, source.source_id)
        stored = await load_stored_state(store, tenant)
        listing = storable_listing(await reader.list_items())
        report.version = listing.version
        report.skipped.extend(IngestSkip(i, r) for i, r in sorted(listing.passed_over.items()))
        to_read = sorted(
            item
            for item, version in listing.items.items()
            if _needs_read(state.get(item), version, stored, embedder.model_id)
        )
        new_state = {
            item: state[item] for item in listing.items if item not in to_read and item in state
        }
        for item, kept in sorted(new_state.items()):
            if kept.skipped is not None:
                report.skipped.append(IngestSkip(item, kept.skipped))
            else:
                report.unchanged += 1
        published = {s.document_id for s in state.values() if s.document_id is not None}
        previous = {doc: v for doc, v in stored.items() if doc in published}
        # Before any page is read: the documents of items gone from the listing alone. The
        # final check below can only retire more, so a refusal here saves the reading.
        listed = {
            s.document_id
            for item, s in state.items()
            if item in listing.items and s.document_id is not None
        }
        documents_to_prune(tenant, previous, TenantScan(seen_ids=listed), force=force)
        batch = _Batch(
            source=source,
            state=state,
            new_state=new_state,
            taken=await _taken_ids(store, tenant, source.source_id),
            stored=stored,
            limits=limits,
            report=report,
        )
        async with store.pool.connection() as conn, conn.transaction():
            reads = read_in_batches(
                reader, listing, to_read, limits.sync_batch_items, limits.sync_batch_bytes
            )
            async with aclosing(reads):
                async for read in reads:
                    pending = batch.pending(listing, read, embedder.model_id)
                    async for group, vectors, _ in embedded_groups(embedder, pending, limits):
                        await batch.write(conn, embedder, group, vectors)
            current = {s.document_id for s in new_state.values() if s.document_id is not None}
            gone = documents_to_prune(tenant, previous, TenantScan(seen_ids=current), force=force)
            await _finish(conn, source, gone, new_state, report)
            report.seconds = time.perf_counter() - started
            await record_synced(conn, source.source_id, report.as_json(), listing.version)
        await store.ensure_vector_index(
            embedder.dim, exact_search_max_chunks=limits.exact_search_max_chunks
        )
    logger.info(
        "synced source %s of %s: %d added, %d changed, %d retired, %d skipped, %d failed in %.2fs",
        source.name,
        tenant,
        report.added,
        report.changed,
        report.retired,
        len(report.skipped),
        len(report.failed),
        report.seconds,
    )
    return report


@dataclass
class _Batch:
    """What carries from one batch of read items to the next: the items' new state, which
    document ids are taken, and where each written document's ``updated`` came from."""

    source: SourceRow
    state: dict[str, ItemState]
    new_state: dict[str, ItemState]
    taken: dict[str, str]
    stored: dict[str, StoredVersion]
    limits: IngestLimits
    report: SyncReport
    owners: dict[str, str] = field(default_factory=dict)
    origins: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.owners = {s.document_id: i for i, s in self.new_state.items() if s.document_id}

    def pending(
        self, listing: SourceListing, read: SourceRead, model_id: str
    ) -> list[PendingDocument]:
        """The batch's documents that need a new version; its problems noted in the report."""
        for problem in read.problems:
            if problem.skipped:
                self.new_state[problem.item_id] = ItemState(
                    listing.items[problem.item_id], None, problem.reason
                )
                self.report.skipped.append(IngestSkip(problem.item_id, problem.reason))
            else:
                self.report.failed.append(IngestFailure(problem.item_id, problem.reason))
                if problem.item_id in self.state:  # its document stays until the file is fixed
                    self.new_state[problem.item_id] = self.state[problem.item_id]
        pending = _pending_documents(
            self.source,
            read.documents,
            self.new_state,
            self.taken,
            self.owners,
            self.stored,
            self.limits,
            self.origins,
            self.report,
        )
        return [p for p in pending if not _same_as_stored(p, self.stored, model_id, self.report)]

    async def write(
        self,
        conn: AsyncConnection[TupleRow],
        embedder: Embedder,
        group: list[PendingDocument],
        vectors: list[Vectors],
    ) -> None:
        written = IngestReport()
        for document, document_vectors in zip(group, vectors, strict=True):
            await write_version_on(conn, embedder, document, document_vectors, written)
            document_id = document.source.document_id
            if document_id in self.origins:
                await conn.execute(
                    _SET_UPDATED_SOURCE,
                    {
                        "tenant": self.source.tenant_id,
                        "document_id": document_id,
                        "origin": self.origins[document_id],
                    },
                )
        self.report.added += written.added
        self.report.changed += written.changed
        self.report.chunks_written += written.chunks_written


def _needs_read(
    known: ItemState | None, version: str, stored: dict[str, StoredVersion], model_id: str
) -> bool:
    if known is None or known.version != version:
        return True
    if known.document_id is None:
        return False  # skipped, and the same bytes would be skipped again
    previous = stored.get(known.document_id)
    return (
        previous is None
        or previous.embedding_model != model_id
        or previous.parse_revision != PARSE_REVISION
        # Retired from outside this source (a folder ingest's prune): the item is still here,
        # so its document comes back.
        or (previous.superseded and previous.superseded_by is None)
    )


def _pending_documents(
    source: SourceRow,
    documents: list[SourceDocument],
    new_state: dict[str, ItemState],
    taken: dict[str, str],
    owners: dict[str, str],
    stored: dict[str, StoredVersion],
    limits: IngestLimits,
    origins: dict[str, str],
    report: SyncReport,
) -> list[PendingDocument]:
    """Each read document as a new version to write, unless its id belongs to another item
    (``taken`` by another source, or in ``owners``: document id → item of this source).

    ``origins`` receives where each document's ``updated`` came from (its frontmatter, or the
    source's kind).
    """
    pending: list[PendingDocument] = []
    for document in sorted(documents, key=lambda d: d.item_id):
        clash = taken.get(document.document_id) or owners.get(document.document_id)
        if clash is not None:
            report.failed.append(
                IngestFailure(
                    document.item_id,
                    f"document id {document.document_id!r} is also used by {clash}",
                )
            )
            continue
        owners[document.document_id] = document.item_id
        new_state[document.item_id] = ItemState(document.version, document.document_id)
        runbook = document.runbook
        if runbook.frontmatter.updated or document.meta.updated:
            origins[document.document_id] = (
                "frontmatter" if runbook.frontmatter.updated else source.kind
            )
        merged = ParsedRunbook(
            frontmatter=document.meta.under(runbook.frontmatter),
            title=runbook.title,
            sections=runbook.sections,
            has_headings=runbook.has_headings,
        )
        source_file = SourceFile(
            path=Path(document.path),
            relative_path=document.path,
            document_id=document.document_id,
            sha256=document.sha256,
            runbook=merged,
        )
        is_new = document.document_id not in stored
        pending.append(prepare_document(source.tenant_id, source_file, is_new, limits))
    return pending


def _same_as_stored(
    document: PendingDocument,
    stored: dict[str, StoredVersion],
    model_id: str,
    report: SyncReport,
) -> bool:
    """The same bytes as the current version (e.g. first sync of runbooks ingested before)."""
    previous = stored.get(document.source.document_id)
    retired = document.source.runbook.frontmatter.superseded_by is not None
    same = (
        previous is not None
        and previous.sha256 == document.source.sha256
        and previous.embedding_model == model_id
        and previous.parse_revision == PARSE_REVISION
        and previous.superseded == retired
    )
    if same:
        report.unchanged += 1
    return same


async def _finish(
    conn: AsyncConnection[TupleRow],
    source: SourceRow,
    gone: list[str],
    new_state: dict[str, ItemState],
    report: SyncReport,
) -> None:
    """Retire the gone documents and replace the source's item state."""
    report.retired += await retire_documents_on(conn, source.tenant_id, gone)
    await conn.execute("DELETE FROM source_items WHERE source_id = %s", (source.source_id,))
    async with conn.cursor() as cursor:
        await cursor.executemany(
            _INSERT_ITEM,
            [
                {
                    "id": source.source_id,
                    "item": item,
                    "version": s.version,
                    "document_id": s.document_id,
                    "skipped": s.skipped,
                }
                for item, s in sorted(new_state.items())
            ],
        )


async def _load_items(store: Store, source_id: uuid.UUID) -> dict[str, ItemState]:
    async with store.pool.connection() as conn:
        cur = await conn.execute(_ITEMS, (source_id,))
        return {row[0]: ItemState(row[1], row[2], row[3]) for row in await cur.fetchall()}


async def _taken_ids(store: Store, tenant: str, source_id: uuid.UUID) -> dict[str, str]:
    async with store.pool.connection() as conn:
        cur = await conn.execute(_TAKEN, {"tenant": tenant, "id": source_id})
        return {row[0]: f"source {row[1]!r}" for row in await cur.fetchall()}


async def remove_source(store: Store, source: SourceRow, *, prune: bool) -> int:
    """Delete ``source``; with ``prune`` also retire its documents (returns how many), else
    they stay searchable as they are. Under the tenant's ingest lock, in one transaction."""
    async with hold_tenant_locks(store, [source.tenant_id]):
        items = await _load_items(store, source.source_id)
        documents = sorted({s.document_id for s in items.values() if s.document_id is not None})
        async with store.pool.connection() as conn, conn.transaction():
            retired = await retire_documents_on(conn, source.tenant_id, documents) if prune else 0
            await conn.execute("DELETE FROM sources WHERE source_id = %s", (source.source_id,))
    return retired
