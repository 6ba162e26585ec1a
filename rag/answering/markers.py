"""Citation markers in answer text, ``[1]`` and ``[1, 2]``; never inside code (``pods[0]``)."""

from __future__ import annotations

import re
from collections.abc import Iterator

# `[1]`, `[1, 2]`; `[1][2]` is two matches.
_MARKER = re.compile(r"\[(\d+(?:\s*,\s*\d+)*)\]")
# Code is quoted verbatim and may hold `[0]`-like indexing; markers inside it are not markers.
_CODE = re.compile(r"^[ \t]*(`{3,}|~{3,}).*?^[ \t]*\1[^\n]*$|`[^`\n]+`", re.MULTILINE | re.DOTALL)


def code_spans(text: str) -> list[tuple[int, int]]:
    """Where ``text`` holds code: fenced blocks and inline code spans."""
    return [match.span() for match in _CODE.finditer(text)]


def find_markers(text: str) -> Iterator[re.Match[str]]:
    """Citation markers in ``text``, skipping those inside code spans and fenced blocks."""
    code = code_spans(text)
    for match in _MARKER.finditer(text):
        if not any(start <= match.start() < end for start, end in code):
            yield match


def marker_numbers(match: re.Match[str]) -> list[int]:
    """The excerpt numbers one marker names, in its order."""
    return [int(part) for part in match.group(1).split(",")]
