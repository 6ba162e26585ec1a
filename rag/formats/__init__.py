"""Runbook formats beyond Markdown, each read into the same ``ParsedRunbook`` as Markdown.

``parse_document`` picks the reader by file suffix; ``parse_confluence_storage`` reads a
Confluence page body. Every reader raises ``EmptyRunbookError`` when there is nothing to index
and ``RunbookFormatError`` (with a reason) when the text cannot be read — never a library's own
exception.
"""

from __future__ import annotations

from collections.abc import Callable

from rag.errors import RunbookFormatError
from rag.formats.asciidoc import parse_asciidoc
from rag.formats.html import parse_confluence_storage, parse_html
from rag.formats.markdown import parse_runbook
from rag.formats.rst import parse_rst
from rag.formats.runbook import ParsedRunbook

_READERS: dict[str, Callable[..., ParsedRunbook]] = {
    ".md": parse_runbook,
    ".markdown": parse_runbook,
    ".rst": parse_rst,
    ".adoc": parse_asciidoc,
    ".html": parse_html,
    ".htm": parse_html,
}

# File suffixes read as runbooks, Markdown first.
RUNBOOK_SUFFIXES: tuple[str, ...] = tuple(_READERS)


def runbook_suffix(name: str) -> str | None:
    """The runbook suffix ``name`` ends with, or None for other files (``README.MD`` is not one:
    suffixes match as written, as ``runbook ingest`` always has)."""
    return next((suffix for suffix in RUNBOOK_SUFFIXES if name.endswith(suffix)), None)


def parse_document(text: str, *, suffix: str, fallback_title: str) -> ParsedRunbook:
    """Parse one runbook file's text with the reader its suffix names (``.md``, ``.html`` …)."""
    reader = _READERS.get(suffix.lower())
    if reader is None:
        raise RunbookFormatError(f"no runbook reader for {suffix!r} files")
    return reader(text, fallback_title=fallback_title)


__all__ = [
    "RUNBOOK_SUFFIXES",
    "parse_confluence_storage",
    "parse_document",
    "runbook_suffix",
]
