"""Changed runbooks → chunk texts → vectors, in groups; the next group embeds while one writes."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterator, Sequence
from dataclasses import dataclass

from rag.embedding.embedder import Embedder, Vectors
from rag.ingest.chunking import chunk_runbook
from rag.ingest.files import SourceFile
from rag.ingest.report import IngestLimits


@dataclass(frozen=True)
class PendingDocument:
    """A file that needs a new version: its chunks, and the texts to embed for them."""

    tenant: str
    source: SourceFile
    is_new: bool
    chunk_contents: tuple[tuple[tuple[str, ...], str], ...]
    embed_texts: tuple[str, ...]


def embed_text(title: str, heading_path: Sequence[str], content: str) -> str:
    """What is embedded for a chunk: title and breadcrumb give a short chunk its context."""
    breadcrumb = " › ".join(dict.fromkeys((title, *heading_path)))
    return f"{breadcrumb}\n\n{content}"


def prepare_document(
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


EmbeddedGroup = tuple[list[PendingDocument], list[Vectors], float]


async def embedded_groups(
    embedder: Embedder, pending: list[PendingDocument], limits: IngestLimits
) -> AsyncIterator[EmbeddedGroup]:
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


async def _embed_group(embedder: Embedder, group: list[PendingDocument]) -> EmbeddedGroup:
    started = time.perf_counter()
    texts = [text for document in group for text in document.embed_texts]
    matrix = await embedder.embed(texts)
    per_document: list[Vectors] = []
    offset = 0
    for document in group:
        per_document.append(matrix[offset : offset + len(document.embed_texts)])
        offset += len(document.embed_texts)
    return group, per_document, time.perf_counter() - started
