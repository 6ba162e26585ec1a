"""Strip HTML comments, Hugo shortcodes and GitLab's TOC marker from prose, in one linear pass.

A regex with lazy ``.*?`` alternatives rescans the rest of the text from every unclosed opener,
so a file of unclosed ``<!--`` takes quadratic time; this scanner finds each opener and each
closer with ``str.find`` from where the last search ended, and remembers a closer that is
missing, so every character is looked at a bounded number of times.

An HTML block that opens with ``<!--`` is hidden up to its ``-->``, or, unclosed, to its end
(``strip_comment_block``): CommonMark renders none of it, so none of it is runbook text.

Inline code is kept verbatim (a shortcode or comment quoted in backticks survives): a run of N
backticks opens a code span that the next run of exactly N backticks on the same line closes.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

_BACKTICKS = re.compile(r"`+")
# GitLab's table-of-contents marker renders as a list of headings, not as text.
_TOC_LINE = re.compile(r"^[ \t]*\[\[_TOC_\]\][ \t]*$", re.MULTILINE)
_SHORTCODE_TARGET = re.compile(r"""^\s*(?:ref|relref)\s+(?:"([^"]*)"|'([^']*)'|(\S+))""")

# Opener → closer of the constructs dropped from prose.
_PAIRS = {"<!--": "-->", "{{<": ">}}", "{{%": "%}}"}


class _NextMatch:
    """The next occurrence of ``needle`` at or after a position that only moves forward."""

    def __init__(self, text: str, needle: str) -> None:
        self._text = text
        self._needle = needle
        self._found = -2  # not searched yet; -1 means none after the last search start

    def at_or_after(self, position: int) -> int:
        if self._found == -1 or self._found >= position:
            return self._found
        self._found = self._text.find(self._needle, position)
        return self._found


@dataclass(frozen=True)
class _Span:
    start: int
    end: int


def _code_spans(text: str) -> dict[int, int]:
    """Start → end of every closed inline code span, pairing runs of equal length per line."""
    runs: list[tuple[int, int, int]] = []
    line = previous = 0
    for match in _BACKTICKS.finditer(text):
        line += text.count("\n", previous, match.start())
        previous = match.start()
        runs.append((line, match.start(), match.end()))
    spans: dict[int, int] = {}
    next_run: dict[tuple[int, int], int] = {}
    # Walk backwards so each run sees the next run of its length on its own line.
    for line, start, end in reversed(runs):
        length = end - start
        closer = next_run.get((line, length))
        if closer is not None:
            spans[start] = closer + length
        next_run[(line, length)] = start
    return spans


def _code_spans_in_order(text: str) -> Iterator[_Span]:
    """Code spans as the left-to-right scan meets them: a span inside a span is no span."""
    spans = _code_spans(text)
    covered_until = 0
    for m in _BACKTICKS.finditer(text):
        if m.start() < covered_until:
            continue
        end = spans.get(m.start())
        if end is not None:
            covered_until = end
            yield _Span(m.start(), end)


def strip_noise(text: str) -> str:
    """Drop comments and shortcode tags (keeping what they wrap); a ref shortcode is its target."""
    openers = {opener: _NextMatch(text, opener) for opener in _PAIRS}
    closers = {opener: _NextMatch(text, closer) for opener, closer in _PAIRS.items()}
    code = list(_code_spans_in_order(text))
    tocs = [_Span(m.start(), m.end()) for m in _TOC_LINE.finditer(text)]
    code_index = toc_index = 0
    pieces: list[str] = []
    position = 0
    while position < len(text):
        while code_index < len(code) and code[code_index].start < position:
            code_index += 1
        while toc_index < len(tocs) and tocs[toc_index].start < position:
            toc_index += 1
        candidates: list[tuple[int, str]] = [
            (found, opener)
            for opener, finder in openers.items()
            if (found := finder.at_or_after(position)) != -1
        ]
        if code_index < len(code):
            candidates.append((code[code_index].start, "`"))
        if toc_index < len(tocs):
            candidates.append((tocs[toc_index].start, "toc"))
        if not candidates:
            break
        start, kind = min(candidates)
        pieces.append(text[position:start])
        if kind == "`":
            end = code[code_index].end
            pieces.append(text[start:end])
            position = end
            continue
        if kind == "toc":
            position = tocs[toc_index].end
            continue
        close = closers[kind].at_or_after(start + len(kind))
        if close == -1:
            # Unclosed: no later opener of this kind can close either, so all are plain text.
            del openers[kind]
            pieces.append(text[start])
            position = start + 1
            continue
        if kind != "<!--":
            pieces.append(_shortcode_replacement(text[start + len(kind) : close]))
        position = close + len(_PAIRS[kind])
    pieces.append(text[position:])
    return "".join(pieces)


def _shortcode_replacement(inner: str) -> str:
    target = _SHORTCODE_TARGET.match(inner)
    if target is None:
        return ""
    return next(group for group in target.groups() if group is not None)


def strip_comment_block(text: str) -> str:
    """An HTML comment block's visible rest: every ``<!--`` hides up to the next ``-->`` or, with
    none after it, to the end of the block, as CommonMark and browsers read it."""
    pieces: list[str] = []
    position = 0
    while (start := text.find("<!--", position)) != -1:
        pieces.append(text[position:start])
        end = text.find("-->", start + 4)
        if end == -1:
            return "".join(pieces)
        position = end + 3
    pieces.append(text[position:])
    return "".join(pieces)
