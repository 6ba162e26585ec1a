"""Ingestion: runbook files → versioned documents and embedded chunks, incrementally.

A document is keyed by (tenant, document_id) and the SHA-256 of its bytes. Unchanged files
are skipped before anything is embedded; a changed one becomes a new version (``ingest_write``).
The whole run holds each tenant's ingest lock, and a prune is planned, and refused if it would
retire most of a tenant, before anything is written (``ingest_guard``).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from pathlib import Path

from rag.embedding.embedder import Embedder
from rag.formats.markdown import PARSE_REVISION
from rag.ingest.embed import PendingDocument, embed_text, embedded_groups, prepare_document
from rag.ingest.files import discover_tenants, linked_tenant_folders
from rag.ingest.guard import documents_sources_own, documents_to_prune
from rag.ingest.relabel import relabel_document
from rag.ingest.report import IngestFailure, IngestLimits, IngestReport, IngestSkip
from rag.ingest.scan import StoredVersion, load_stored_state, scan_tenant
from rag.ingest.staleness import record_update_dates
from rag.ingest.write import ensure_tenant, retire_documents, write_version
from rag.store.connection import Store
from rag.store.partitions import rebalance_due
from rag.store.tenant_locks import hold_tenant_locks

__all__ = [
    "IngestFailure",
    "IngestLimits",
    "IngestReport",
    "IngestSkip",
    "ProgressCallback",
    "embed_text",
    "ingest_path",
]

logger = logging.getLogger(__name__)

# (chunks embedded and written so far, chunks this run embeds): see rag.progress.ProgressBar.
ProgressCallback = Callable[[int, int], None]


async def ingest_path(
    store: Store,
    embedder: Embedder,
    root: Path,
    *,
    tenant: str | None,
    prune: bool,
    limits: IngestLimits,
    force: bool = False,
    on_progress: ProgressCallback | None = None,
) -> IngestReport:
    """Ingest ``root`` (docs/architecture.md has the tenant rule); ``force`` lifts the prune guard.

    Raises ``PruneRefusedError`` before writing anything when a prune would retire more than half
    of a tenant's current documents and ``force`` is not set.
    """
    started = time.perf_counter()
    report = IngestReport()
    folders = discover_tenants(root, tenant)
    report.tenants = [f.tenant for f in folders]
    report.skipped.extend(
        IngestSkip(str(s.path), s.reason) for s in linked_tenant_folders(root, tenant)
    )
    async with hold_tenant_locks(store, report.tenants):
        pending: list[PendingDocument] = []
        retirements: dict[str, list[str]] = {}
        for folder in folders:
            await ensure_tenant(store, folder.tenant)
            stored = await load_stored_state(store, folder.tenant)
            _announce_reembedding(folder.tenant, stored, embedder.model_id)
            scan = await asyncio.to_thread(scan_tenant, folder, stored, embedder.model_id, limits)
            relabelled = 0
            for source in scan.relabel:
                version = stored[source.document_id].version
                if await relabel_document(store, folder.tenant, source, version, limits):
                    relabelled += 1
                else:
                    scan.changed.append(source)
            if relabelled:
                logger.info(
                    "%s: heading paths of %d documents brought up to parse revision %d",
                    folder.tenant,
                    relabelled,
                    PARSE_REVISION,
                )
            report.unchanged += scan.unchanged + relabelled
            report.failed.extend(scan.failed)
            report.skipped.extend(scan.skipped)
            if prune:
                owned = await documents_sources_own(store, folder.tenant)
                folders_own = {d: v for d, v in stored.items() if d not in owned}
                retirements[folder.tenant] = documents_to_prune(
                    folder.tenant, folders_own, scan, force=force
                )
            pending.extend(
                prepare_document(folder.tenant, source, source.document_id not in stored, limits)
                for source in scan.changed
            )

        # Progress counts chunks: embedding them is the slow part, and files differ in size.
        total_chunks = sum(len(document.embed_texts) for document in pending)
        done_chunks = 0
        if on_progress is not None:
            on_progress(done_chunks, total_chunks)
        async for group, vectors, seconds in embedded_groups(embedder, pending, limits):
            report.embed_seconds += seconds
            for document, document_vectors in zip(group, vectors, strict=True):
                await write_version(store, embedder, document, document_vectors, report)
                done_chunks += len(document.embed_texts)
                if on_progress is not None:
                    on_progress(done_chunks, total_chunks)

        await record_update_dates(store, folders)
        for tenant_id, gone in retirements.items():
            report.removed += await retire_documents(store, tenant_id, gone)
        # After the write, and under the tenants' locks so no rebalance moves their partition
        # meanwhile: a partition that just grew past the exact-scan size gets its graph.
        await store.ensure_vector_index(
            embedder.dim, exact_search_max_chunks=limits.exact_search_max_chunks
        )
    if limits.partition_min_chunks is not None:
        report.rebalance_due = await rebalance_due(
            store, min_chunks=limits.partition_min_chunks, tenants=report.tenants
        )
    report.seconds = time.perf_counter() - started
    logger.info(
        "ingested %s: %d added, %d changed, %d unchanged, %d skipped, %d chunks in %.2fs",
        ",".join(report.tenants),
        report.added,
        report.changed,
        report.unchanged,
        len(report.skipped),
        report.chunks_written,
        report.seconds,
    )
    return report


def _announce_reembedding(tenant: str, stored: dict[str, StoredVersion], model_id: str) -> None:
    """Say why an ingest embeds documents whose files did not change: the model id did."""
    others = sorted({v.embedding_model for v in stored.values() if not v.superseded} - {model_id})
    if others:
        count = sum(
            1 for v in stored.values() if not v.superseded and v.embedding_model != model_id
        )
        logger.warning(
            "%s: %d documents were embedded with %s; re-embedding them once with %s",
            tenant,
            count,
            ", ".join(others),
            model_id,
        )
