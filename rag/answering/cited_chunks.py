"""Chunks read back by id under the tenant's row-level security, and quotes as positions in them.

A stored answer keeps chunk ids and quote positions, not runbook text: a card redrawn later
re-reads the text here, so a runbook changed or pruned since then shows as such instead of
living on in the answers table.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from functools import lru_cache

from psycopg.rows import class_row

from rag.answering.verify import normalize_quote
from rag.store.connection import Store


@dataclass(frozen=True)
class CitedChunk:
    """A chunk as it is stored now; ``current_version`` is the document's live version, if any
    (None once the document was pruned or retired)."""

    chunk_id: int
    document_id: str
    version: int
    title: str
    heading_path: list[str]
    content: str
    url: str | None
    owner: str | None
    updated: str | None
    service: str | None
    superseded: bool
    current_version: int | None


@dataclass(frozen=True)
class QuoteSpan:
    """Where a verified quote sits in its chunk's content: ``content[start:end]``; ``reflowed``
    when the quote differed from those characters by whitespace or quotation marks (it reads
    back in the normalised form, as it was first shown)."""

    start: int
    end: int
    reflowed: bool = False


_LOAD = """
SELECT c.chunk_id, c.document_id, c.version, d.title, c.heading_path, c.content, d.url, d.owner,
       d.updated, d.service, c.superseded, live.version AS current_version
FROM chunks c
JOIN documents d
  ON d.tenant_id = c.tenant_id AND d.document_id = c.document_id AND d.version = c.version
LEFT JOIN documents live
  ON live.tenant_id = c.tenant_id AND live.document_id = c.document_id AND NOT live.superseded
WHERE c.tenant_id = %(tenant)s AND c.chunk_id = ANY(%(ids)s)
"""


async def load_chunks(
    store: Store, tenant: str, chunk_ids: Collection[int]
) -> dict[int, CitedChunk]:
    """The tenant's chunks among ``chunk_ids``, superseded ones included; absent ids are gone."""
    if not chunk_ids:
        return {}
    async with store.tenant_reader(tenant) as conn:
        cur = conn.cursor(row_factory=class_row(CitedChunk))
        await cur.execute(_LOAD, {"tenant": tenant, "ids": sorted(set(chunk_ids))})
        return {chunk.chunk_id: chunk for chunk in await cur.fetchall()}


def locate_quote(content: str, quote: str) -> QuoteSpan | None:
    """The span of ``content`` that a verified quote matches, compared as verification compares
    them (``normalize_quote``); the span keeps the runbook's own line breaks."""
    needle = normalize_quote(quote)
    normalized, origins = _normalized_with_origins(content)
    start = normalized.find(needle) if needle else -1
    if start < 0:
        return None
    span = QuoteSpan(origins[start], origins[start + len(needle) - 1] + 1)
    return QuoteSpan(span.start, span.end, reflowed=content[span.start : span.end] != quote)


def quote_at(content: str, span: QuoteSpan) -> str | None:
    """The quote at ``span``, or None when the span does not fit ``content``."""
    if not 0 <= span.start < span.end <= len(content):
        return None
    quote = content[span.start : span.end]
    return normalize_quote(quote) if span.reflowed else quote


# A character loop over the whole chunk, for every citation stored; the chunks cited repeat.
@lru_cache(maxsize=1024)
def _normalized_with_origins(content: str) -> tuple[str, tuple[int, ...]]:
    """``normalize_quote(content)`` and, per character of it, its index in ``content``."""
    chars: list[str] = []
    origins: list[int] = []
    space_at: int | None = None
    for i, char in enumerate(content):
        if char.isspace():  # what str.split() splits on
            if chars and space_at is None:
                space_at = i
            continue
        if space_at is not None:
            chars.append(" ")
            origins.append(space_at)
            space_at = None
        chars.append(normalize_quote(char))  # one character: only the curly-quote mapping applies
        origins.append(i)
    return "".join(chars), tuple(origins)
