"""Citation numbers in reading order: the first marker in the answer is [1], the next new one [2].

Answerers mark excerpts by their evidence rank, so an answer could read "[1] … [4] … [3]"; a
responder reads the markers as footnotes and expects them to count up. Renumbering happens once,
after verification, so every surface (text card, Slack, Teams) and the stored answer agree.
Only the label changes: each citation keeps its quote and the chunk it was verified against.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from rag.answering.answers import Citation
from rag.answering.markers import find_markers, marker_numbers


def in_reading_order(text: str, citations: Sequence[Citation]) -> tuple[str, tuple[Citation, ...]]:
    """``text`` with its markers renumbered by first appearance, and ``citations`` relabelled to
    match, ordered by their new number (quotes of one number keep their order)."""
    new: dict[int, int] = {}
    for match in find_markers(text):
        for n in marker_numbers(match):
            new.setdefault(n, len(new) + 1)
    # Verification keeps only marked citations; any other would still need a number of its own.
    for citation in citations:
        new.setdefault(citation.n, len(new) + 1)
    relabelled = [replace(citation, n=new[citation.n]) for citation in citations]
    return _renumber(text, new), tuple(sorted(relabelled, key=lambda c: c.n))


def _renumber(text: str, new: dict[int, int]) -> str:
    """Each marker with its numbers mapped through ``new``, ascending (``[4, 2]`` → ``[1, 2]``)."""
    pieces: list[str] = []
    position = 0
    for match in find_markers(text):
        numbers = sorted(dict.fromkeys(new[n] for n in marker_numbers(match)))
        pieces.append(text[position : match.start()] + "[" + ", ".join(map(str, numbers)) + "]")
        position = match.end()
    pieces.append(text[position:])
    return "".join(pieces)
