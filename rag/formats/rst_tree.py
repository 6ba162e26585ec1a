"""docutils, set up to read an untrusted reStructuredText file into a document tree."""

from __future__ import annotations

import io
from typing import Any

from docutils import nodes
from docutils.core import publish_doctree
from docutils.parsers.rst import Parser

from rag.errors import RunbookFormatError
from rag.formats.rst_inline import LinearInliner, LinearReader

# No file or URL is ever read (include, raw, csv-table :file:), no configuration file either.
# WARNING and worse stay in the tree: a Sphinx-only directive's source lives in its message.
_SETTINGS: dict[str, Any] = {
    "_disable_config": True,
    "file_insertion_enabled": False,
    "raw_enabled": False,
    "report_level": 2,
    "halt_level": 5,
    "exit_status_level": 5,
    "doctitle_xform": False,
    "docinfo_xform": False,
    "sectsubtitle_xform": False,
    "syntax_highlight": "none",
    "smart_quotes": False,
    "embed_stylesheet": False,
    "traceback": True,
}


def parse_rst_tree(text: str) -> nodes.document:
    try:
        return publish_doctree(
            text.removeprefix("\ufeff"),
            reader=LinearReader(),
            parser=Parser(inliner=LinearInliner()),
            settings_overrides={**_SETTINGS, "warning_stream": io.StringIO()},
        )
    # docutils raises whatever its parser trips over on hostile input (an IndexError in a
    # table, a RecursionError in deep nesting): any of them means the file cannot be read.
    except Exception as exc:
        raise RunbookFormatError(f"unreadable reStructuredText: {exc}") from exc
