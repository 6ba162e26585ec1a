"""A cited runbook as the card navigates it: its top-level sections, rebuilt verbatim from the
stored chunks of its current version, read under the tenant's row-level security.

A heading path's first entry names the runbook (``rag.formats.heading_paths``), so a chunk's
top-level
section is its second entry; text before the first heading is the "Overview". Chunks of one
section overlap by a prose tail and split code blocks are fenced again per part: both are undone
here, so a section reads as the runbook does, code blocks whole. An indented code block is
fenced (``rag.answering.indented_code``), so every card shows and marks it as code.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from cachetools import LRUCache

from rag.answering.answers import AskResult
from rag.answering.indented_code import fence_indented_code
from rag.answering.runbook_view import RunbookSection, RunbookView
from rag.retrieval.evidence import Evidence
from rag.store.connection import Store

OVERVIEW = "Overview"
# A shorter shared run between two chunks is more likely a coincidence than their overlap.
_MIN_OVERLAP = 6
_FENCE_LINE = re.compile(r"[ \t]*(`{3,}|~{3,})[^\n]*")
_LIST_ITEM = re.compile(r"[ \t]*(?:[-*+]|\d{1,9}[.)])(?:[ \t]|$)")
_ENDS = (".", "!", "?", ":")


@dataclass(frozen=True)
class SectionChunk:
    chunk_id: int
    heading_path: list[str]
    content: str


_SECTIONS = """
SELECT c.chunk_id, c.heading_path, c.content, d.title, d.url
FROM chunks c
JOIN documents d
  ON d.tenant_id = c.tenant_id AND d.document_id = c.document_id AND d.version = c.version
WHERE c.tenant_id = %(tenant)s AND c.document_id = %(document)s
  AND NOT c.superseded AND NOT d.superseded
ORDER BY c.ordinal
"""
_SECTIONS_OF_VERSION = """
SELECT c.chunk_id, c.heading_path, c.content, d.title, d.url
FROM chunks c
JOIN documents d
  ON d.tenant_id = c.tenant_id AND d.document_id = c.document_id AND d.version = c.version
WHERE c.tenant_id = %(tenant)s AND c.document_id = %(document)s AND c.version = %(version)s
ORDER BY c.ordinal
"""


@dataclass(frozen=True)
class _Runbook:
    title: str
    url: str | None
    sections: tuple[RunbookSection, ...]

    def view(self, document_id: str, cited_path: Sequence[str]) -> RunbookView:
        key = section_heading(cited_path, title=self.title)
        best = next((i for i, s in enumerate(self.sections) if s.heading == key), 0)
        return RunbookView(document_id, self.title, self.url, self.sections, best)


async def load_runbook(
    store: Store, tenant: str, document_id: str, *, cited_path: Sequence[str] = ()
) -> RunbookView | None:
    """The tenant's current version of ``document_id`` (None when it has none); ``cited_path``
    is the heading path the answer cites, which picks the best section."""
    found = await _load(store, tenant, document_id, None)
    return found.view(document_id, cited_path) if found else None


async def runbook_of(store: Store, result: AskResult) -> RunbookView | None:
    """The runbook an answered result names (the document of its first citation), as it is
    now: a stored answer redrawn later shows the runbook's current version."""
    first = _first_cited(result)
    if first is None:
        return None
    return await load_runbook(
        store, result.tenant, first.document_id, cited_path=first.heading_path
    )


class RunbookCache:
    """The runbooks fresh answers name, per version: a version's chunks never change, so a
    runbook answered from again is not read again. Touch only from the event loop."""

    def __init__(self, size: int = 256) -> None:
        self._cache: LRUCache[tuple[str, str, int], _Runbook] = LRUCache(maxsize=size)

    async def runbook_of(self, store: Store, result: AskResult) -> RunbookView | None:
        """As ``runbook_of``, for a result just answered: it cites the current version."""
        first = _first_cited(result)
        if first is None:
            return None
        key = (result.tenant, first.document_id, first.version)
        found = self._cache.get(key)
        if found is None:
            found = await _load(store, result.tenant, first.document_id, first.version)
            if found is None:
                return None
            self._cache[key] = found
        return found.view(first.document_id, first.heading_path)


def _first_cited(result: AskResult) -> Evidence | None:
    if result.status != "answered" or not result.citations:
        return None
    # Citations are numbered in reading order (rag.answering.reading_order): [1] is where the
    # answer opens.
    return min(result.citations, key=lambda c: c.n).evidence


async def _load(
    store: Store, tenant: str, document_id: str, version: int | None
) -> _Runbook | None:
    params = {"tenant": tenant, "document": document_id, "version": version}
    async with store.tenant_reader(tenant) as conn:
        if version is None:
            cur = await conn.execute(_SECTIONS, params)
        else:
            cur = await conn.execute(_SECTIONS_OF_VERSION, params)
        rows = await cur.fetchall()
    if not rows:
        return None
    chunks = [SectionChunk(row[0], list(row[1]), row[2]) for row in rows]
    return _Runbook(rows[0][3], rows[0][4], tuple(sections_of(chunks, title=rows[0][3])))


def section_heading(heading_path: Sequence[str], *, title: str) -> str:
    """The top-level section a heading path lies in."""
    if len(heading_path) >= 2:
        return heading_path[1]
    if heading_path and heading_path[0] != title:
        return heading_path[0]  # a second level-1 heading: a section of its own
    return OVERVIEW


def sections_of(chunks: Sequence[SectionChunk], *, title: str) -> list[RunbookSection]:
    """Chunks (in document order) grouped into top-level sections, each rebuilt verbatim."""
    grouped: dict[str, list[SectionChunk]] = {}
    for chunk in chunks:
        grouped.setdefault(section_heading(chunk.heading_path, title=title), []).append(chunk)
    return [_section(heading, group) for heading, group in grouped.items()]


def gold_in_card(view: RunbookView, sections: Sequence[str | None]) -> bool:
    """Whether any of ``sections`` (gold headings; None: the whole runbook) is shown or one
    click away: a heading inside a section the card offers."""
    offered = {h.casefold() for i in view.offered() for h in view.sections[i].headings}
    return any(s is None or s.casefold() in offered for s in sections)


def _section(heading: str, chunks: Sequence[SectionChunk]) -> RunbookSection:
    text = ""
    headings: dict[str, None] = {heading: None}
    path: list[str] | None = None
    for chunk in chunks:
        if chunk.heading_path != path:
            headings.update(dict.fromkeys(chunk.heading_path))
            # A sub-heading opens its part of the section, as Markdown writes it (level 3 for
            # the first level below a section).
            if len(chunk.heading_path) > 2:
                marks = "#" * min(len(chunk.heading_path), 6)
                heading_line = f"{marks} {chunk.heading_path[-1]}"
                text = f"{text}\n\n{heading_line}" if text else heading_line
                text = f"{text}\n\n{chunk.content}"
            else:
                text = _join(text, chunk.content, overlap=False)
            path = chunk.heading_path
        else:
            text = _join(text, chunk.content, overlap=True)
    return RunbookSection(heading, fence_indented_code(text).strip(), tuple(headings))


def _join(text: str, content: str, *, overlap: bool) -> str:
    """``content`` after ``text``: its overlap with the end of ``text`` dropped, and a code
    block cut in two at the chunk boundary joined again."""
    if not text:
        return content
    if overlap:
        for size in range(min(len(text), len(content)), _MIN_OVERLAP - 1, -1):
            if text.endswith(content[:size]):
                return text + content[size:]
        head, _, last = text.rpartition("\n")
        first, _, rest = content.partition("\n")
        closing, opening = _FENCE_LINE.fullmatch(last), _FENCE_LINE.fullmatch(first)
        if closing and opening and closing.group(1)[0] == opening.group(1)[0] and rest:
            return head + "\n" + rest
    # The gap the chunker dropped: a line break inside a paragraph or a list, else a blank line.
    last_line, first_line = text.rpartition("\n")[2], content.partition("\n")[0]
    in_list = _LIST_ITEM.match(last_line) and _LIST_ITEM.match(first_line)
    mid_sentence = not _FENCE_LINE.fullmatch(last_line) and not last_line.rstrip().endswith(_ENDS)
    return text + ("\n" if in_list or mid_sentence else "\n\n") + content
