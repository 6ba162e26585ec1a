"""The breadcrumb rule every runbook format shares: where a section's heading path starts.

A path's first entry is the runbook's name and the rest are its sections, as the ranker and the
answer read them. A runbook with a level-1 heading names itself with it (the first one is its
title unless the metadata gives another); one without has its title at the root of every path.
"""

from __future__ import annotations


def title_and_root(
    *, metadata_title: str | None, first_h1: str | None, fallback_title: str
) -> tuple[str, tuple[str, ...]]:
    """The runbook's title, and the entries every heading path starts with before its headings."""
    title = (metadata_title or "").strip() or first_h1 or fallback_title
    return title, (() if first_h1 is not None else (title,))


class HeadingPaths:
    """The heading path after each heading, in document order.

    An empty heading closes the deeper headings above it but adds no entry of its own.
    """

    def __init__(self, *, title: str, root: tuple[str, ...]) -> None:
        self._title = title
        self._root = root
        self._stack: list[tuple[int, str]] = []

    def enter(self, level: int, text: str) -> tuple[str, ...]:
        self._stack = [entry for entry in self._stack if entry[0] < level]
        if text:
            self._stack.append((level, text))
        return (*self._root, *(entry for _, entry in self._stack)) or (self._title,)
