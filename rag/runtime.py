"""Wiring for entry points: settings in, a ready ``RagService`` (and its parts) out."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

from rag.answering.answerers import build_answerer
from rag.embedding.embedder import FastEmbedder
from rag.ingest.report import IngestLimits, IngestReport
from rag.progress import ProgressBar
from rag.service import RagService
from rag.settings import Settings
from rag.store.connection import Store


@dataclass(frozen=True)
class Runtime:
    settings: Settings
    store: Store
    embedder: FastEmbedder
    service: RagService

    @property
    def ingest_limits(self) -> IngestLimits:
        return ingest_limits(self.settings)

    async def ingest(
        self, path: Path, *, tenant: str | None, prune: bool, progress: bool, force: bool = False
    ) -> IngestReport:
        """Ingest ``path``; with ``progress``, show chunks embedded on stderr (``ProgressBar``)."""
        # The pipeline, with every runbook format's parser, loads for an ingest, not for an ask.
        from rag.ingest.pipeline import ingest_path

        with ProgressBar("ingesting") as bar:
            return await ingest_path(
                self.store,
                self.embedder,
                path,
                tenant=tenant,
                prune=prune,
                force=force,
                limits=self.ingest_limits,
                on_progress=bar.update if progress else None,
            )


def ingest_limits(settings: Settings) -> IngestLimits:
    return IngestLimits(
        max_file_bytes=settings.max_file_bytes,
        chunk_max_chars=settings.chunk_max_chars,
        chunk_overlap_chars=settings.chunk_overlap_chars,
        sync_batch_bytes=settings.sync_batch_bytes,
        partition_min_chunks=settings.partition_min_chunks,
        exact_search_max_chunks=settings.exact_search_max_chunks,
    )


@asynccontextmanager
async def open_store(settings: Settings) -> AsyncIterator[Store]:
    store = await Store.open(settings)
    try:
        yield store
    finally:
        await store.close()


@asynccontextmanager
async def open_runtime(settings: Settings) -> AsyncIterator[Runtime]:
    async with open_store(settings) as store:
        embedder = await FastEmbedder.load(settings)
        answerer = build_answerer(settings)
        try:
            service = RagService(
                store=store, embedder=embedder, answerer=answerer, settings=settings
            )
            yield Runtime(settings, store, embedder, service)
        finally:
            await answerer.aclose()
            embedder.close()
