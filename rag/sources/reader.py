"""What a source kind provides to the sync: the ``SourceReader`` seam and the values it returns.

A reader lists the items a source holds now, each with a version key (a git blob id, a
Confluence page version), and reads only the items whose version changed since the last sync
into parsed runbooks, with the metadata the source knows (url, last update, owner, tags,
service). ``rag.sources.sync`` does everything else (compare, embed, publish, retire), the same
for every kind.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from rag.formats.runbook import Frontmatter, ParsedRunbook


@dataclass(frozen=True)
class SourceMeta:
    """What the source says about a document; the runbook's own frontmatter wins over it."""

    url: str | None = None
    updated: str | None = None  # YYYY-MM-DD
    owner: str | None = None
    tags: tuple[str, ...] = ()
    service: str | None = None

    def under(self, frontmatter: Frontmatter) -> Frontmatter:
        """``frontmatter`` with the fields it leaves empty taken from the source."""
        fills = {
            "url": frontmatter.url or self.url,
            "updated": frontmatter.updated or self.updated,
            "owner": frontmatter.owner or self.owner,
            "tags": frontmatter.tags or self.tags,
            "service": frontmatter.service or self.service,
        }
        return frontmatter.model_copy(update=fills)


@dataclass(frozen=True)
class SourceDocument:
    """One changed item, read and parsed. ``path`` is what is stored as the document's
    ``source_path`` (a file path, ``confluence/<page id>``)."""

    item_id: str
    version: str
    document_id: str
    path: str
    sha256: str
    runbook: ParsedRunbook
    meta: SourceMeta = SourceMeta()


@dataclass(frozen=True)
class ItemProblem:
    """An item not published, and why. ``skipped``: deliberately (a link, a binary or oversize
    file), listed and retired if it was a document; otherwise it failed (a parse error) and its
    earlier document, if any, stays."""

    item_id: str
    reason: str
    skipped: bool


@dataclass(frozen=True)
class SourceListing:
    """The items a source holds now (item id → version key), the ones passed over at listing
    (item id → reason), and the version of the whole source (a commit id; '' if none)."""

    items: Mapping[str, str]
    passed_over: Mapping[str, str] = field(default_factory=dict)
    version: str = ""


@dataclass(frozen=True)
class SourceRead:
    """What a read returned; ``unread``: the last items asked for, left for the next read
    because the ones before them reached the read's ``max_bytes``."""

    documents: list[SourceDocument] = field(default_factory=list)
    problems: list[ItemProblem] = field(default_factory=list)
    unread: list[str] = field(default_factory=list)


class SourceReader(Protocol):
    """One configured source of one kind. Raises ``SourceSyncError`` when the source cannot be
    read at all (unreachable, refused credentials, missing branch or space).

    ``read_items`` reads the items in the order asked and, given ``max_bytes``, stops once the
    bytes read (files, page bodies) reach it, so a read holds at most ``max_bytes`` plus one
    item (itself capped by ``RUNBOOK_MAX_FILE_BYTES``); the rest come back as
    ``SourceRead.unread``.
    """

    async def list_items(self) -> SourceListing: ...

    async def read_items(
        self, listing: SourceListing, item_ids: Sequence[str], *, max_bytes: int | None = None
    ) -> SourceRead: ...


async def read_in_batches(
    reader: SourceReader, listing: SourceListing, items: list[str], size: int, max_bytes: int
) -> AsyncGenerator[SourceRead, None]:
    """``items`` read at most ``size`` and ``max_bytes`` at a time (whatever a batch leaves
    unread starts the next); the next batch is fetched while the caller embeds this one
    (reading waits on the network or git, embedding on the CPU), so two batches are held."""
    if not items:
        return
    start = 0

    def read_next() -> asyncio.Future[SourceRead]:
        batch = items[start : start + size]
        return asyncio.ensure_future(reader.read_items(listing, batch, max_bytes=max_bytes))

    upcoming = read_next()
    try:
        while True:
            asked = min(size, len(items) - start)
            read = await upcoming
            if len(read.unread) >= asked:  # a reader that breaks the contract: no endless loop
                raise ValueError(f"a read of {asked} items read none of them")
            start += asked - len(read.unread)
            if start < len(items):
                upcoming = read_next()
            yield read
            if start >= len(items):
                return
    finally:
        if not upcoming.done():
            upcoming.cancel()
        with contextlib.suppress(BaseException):
            await upcoming  # a read that failed after the sync already had: not "never retrieved"
