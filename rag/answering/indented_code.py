"""Markdown's indented code blocks: where a chunk or section holds them, and the same text with
each one fenced, so whatever reads fenced code (passages, the state-change marks, the cards)
reads them too.

Runbooks older than fences indent their commands four spaces (the OpenShift alert runbooks:
``oc delete po <ovnkube-node> -n openshift-ovn-kubernetes`` under "Mitigation"); read as prose,
such a command lost its code block and its "changes state" mark. CommonMark decides what is
code — an indented line after a blank line, not a paragraph's continuation and not a list
item's own text — so markdown-it reads it, as ``rag.formats.markdown`` does at ingest.
"""

from __future__ import annotations

import re
import textwrap
from functools import lru_cache

from markdown_it import MarkdownIt

__all__ = ["code_fence", "fence_indented_code", "indented_body", "indented_code_spans"]

_BLOCKS = MarkdownIt("commonmark").disable("inline")
# Text without any line indented this far holds no indented code: no parse needed.
_INDENTED = re.compile(r"^(?: {4}|[ ]{0,3}\t)", re.MULTILINE)
# A list item or a code fence, where a line that opens an indented block reads as one.
_NOT_CODE_START = re.compile(r"(?:[-*+]|\d{1,9}[.)])(?:[ \t]|$)|`{3,}|~{3,}")
_BACKTICKS = re.compile(r"`+")


@lru_cache(maxsize=4096)
def indented_code_spans(text: str) -> tuple[tuple[int, int], ...]:
    """The line ranges ``(first, end)`` (end excluded) of the indented code blocks of ``text``,
    in order.

    A chunk is a piece of its section, so an indented block that opens it was cut from a list
    item more often than it is code: the 12 chunks of the public collections that open so open
    on prose, HTML or a fenced block indented under an item, none on a command. Such a block
    does not count, nor one whose first line is a list item or a fence (a fenced block indented
    under a list item reads as that fenced block, as everywhere else).
    """
    if _INDENTED.search(text) is None:
        return ()
    lines = text.split("\n")
    opening = next((i for i, line in enumerate(lines) if line.strip()), 0)
    spans: list[tuple[int, int]] = []
    for token in _BLOCKS.parse(text):
        if token.type != "code_block" or token.map is None:
            continue
        first, end = token.map
        if first == opening or _NOT_CODE_START.match(lines[first].lstrip()):
            continue
        # markdown-it counts the blank lines that close a block; the block ends on its last line.
        while end > first and not lines[end - 1].strip():
            end -= 1
        spans.append((first, end))
    return tuple(spans)


def indented_body(lines: list[str]) -> str:
    """The code of an indented block's lines, without the indentation that marks it."""
    return textwrap.dedent("\n".join(lines)).strip("\n")


def code_fence(body: str) -> str:
    """A backtick fence longer than any backtick run in ``body``."""
    longest = max((len(run) for run in _BACKTICKS.findall(body)), default=0)
    return "`" * max(3, longest + 1)


def fence_indented_code(text: str) -> str:
    """``text`` with each indented code block written as a fenced one (its code dedented);
    ``text`` itself when it has none. The code's words are unchanged, so a quote of it still
    verifies against the stored chunk."""
    spans = indented_code_spans(text)
    if not spans:
        return text
    lines = text.split("\n")
    out: list[str] = []
    done = 0
    for first, end in spans:
        out += lines[done:first]
        body = indented_body(lines[first:end])
        fence = code_fence(body)
        out += [fence, body, fence]
        done = end
    out += lines[done:]
    return "\n".join(out)
