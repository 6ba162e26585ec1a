"""Cut a draft's text into claims, each with the citation numbers that support it.

A claim runs to the end of its sentence or line, or to the marker group that closes it, so
"Fail over [2] and page the owner [3]." is two claims. A marker alone after a sentence or a code
block ("```…```\\n[1]") belongs to the claim before it, and so does a blank line. Code spans and
fenced blocks are never cut, nor is a line from the code block it introduces ("Raise the limit:"
and its command are one claim, carried by the marker after the block). Concatenating every
claim's text gives back the draft's text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rag.answering.markers import code_spans, find_markers, marker_numbers

# A marker's claim takes the punctuation, spaces and line break that follow the marker.
_MARKER_TAIL = re.compile(r"[.,;:!?)]*[ \t]*\n?")
# A sentence end inside a line: a full stop, then spaces, then something that can start a
# sentence. A claim also ends at a line break.
SENTENCE_GAP = re.compile(r"(?<=[.!?])[ \t]+(?=[A-Z0-9`\"'*(\[])")
_BREAK = re.compile(SENTENCE_GAP.pattern + r"|\n")
_ABBREVIATIONS = ("e.g.", "i.e.", "etc.", "vs.", "approx.", "No.")
_BULLET = re.compile(r"^[ \t]*(?:[-*+]|\d{1,9}[.)])[ \t]+")
_FENCE_LINE = re.compile(r"^[ \t]*(?:`{3,}|~{3,}).*$", re.MULTILINE)
_FENCE_START = re.compile(r"[ \t]*(?:`{3,}|~{3,})")
_WORDY = re.compile(r"\w")


@dataclass(frozen=True)
class Claim:
    """``text`` is a verbatim slice of the draft; ``numbers`` are the excerpts its markers name."""

    text: str
    numbers: tuple[int, ...]

    @property
    def content(self) -> str:
        """The claim as a reader sees it: no markers, no list bullet, no code fences."""
        stripped = self.text
        for match in reversed(list(find_markers(stripped))):
            stripped = stripped[: match.start()] + stripped[match.end() :]
        stripped = _FENCE_LINE.sub("", _BULLET.sub("", stripped))
        return stripped.strip()

    @property
    def says_something(self) -> bool:
        return _WORDY.search(self.content) is not None


def cut_claims(text: str) -> list[Claim]:
    code = code_spans(text)
    markers = list(find_markers(text))
    cuts = {_MARKER_TAIL.match(text, m.end()).end() for m in markers}  # type: ignore[union-attr]
    for match in _BREAK.finditer(text):
        inside_code = any(start <= match.start() < end for start, end in code)
        introduces_code = _FENCE_START.match(text, match.end()) is not None
        if (
            not inside_code
            and not introduces_code
            and not text[: match.start()].endswith(_ABBREVIATIONS)
        ):
            cuts.add(match.end())
    bounds = sorted({0, len(text), *cuts})
    claims: list[Claim] = []
    for start, end in zip(bounds, bounds[1:], strict=False):
        piece = text[start:end]
        numbers = tuple(n for m in markers if start <= m.start() < end for n in marker_numbers(m))
        claim = Claim(piece, numbers)
        if claims and not claim.says_something:
            # A lone marker or a blank line belongs to the claim before it.
            previous = claims.pop()
            claim = Claim(previous.text + piece, previous.numbers + numbers)
        claims.append(claim)
    return claims
