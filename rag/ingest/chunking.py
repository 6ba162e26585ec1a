"""Cut a parsed runbook's sections into size-capped chunks along Markdown structure."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from rag.formats.runbook import ChunkDraft, ParsedRunbook

# A fragment shorter than this says too little to be retrieved on its own.
MIN_CHUNK_CHARS = 40
# Below this a re-opened code fence would leave almost no room for the code itself.
_SMALLEST_MAX_CHARS = 100

_FENCE_OPEN = re.compile(r"(?P<indent>[ \t]*)(?P<marker>`{3,}|~{3,})(?P<info>.*)")
_LIST_ITEM = re.compile(r"[ \t]*(?:[-*+]|\d{1,9}[.)])(?:[ \t]|$)")
_SENTENCE_GAP = re.compile(r"(?<=[.!?])\s+")
_LINE_GAP = re.compile(r"[ \t]*\n\s*")
_WORD_GAP = re.compile(r"\s+")
_PROSE_CUTS = (_SENTENCE_GAP, _LINE_GAP, _WORD_GAP)
# A table row rarely ends in a full stop, and cutting one mid-row garbles every column.
_TABLE_CUTS = (_LINE_GAP, _WORD_GAP)


@dataclass(frozen=True)
class _Piece:
    """A unit the packer never cuts; ``gap`` is the source whitespace that preceded it."""

    text: str
    gap: str
    is_code: bool


@dataclass(frozen=True)
class _Block:
    start: int
    end: int
    fence: re.Match[str] | None


def chunk_runbook(
    runbook: ParsedRunbook, *, max_chars: int, overlap_chars: int
) -> list[ChunkDraft]:
    """Chunk each section on its own, so no chunk straddles two sections; ordinals run 0..n-1."""
    if max_chars < _SMALLEST_MAX_CHARS:
        raise ValueError(f"max_chars must be at least {_SMALLEST_MAX_CHARS}, got {max_chars}")
    if not 0 <= overlap_chars < max_chars:
        raise ValueError(f"overlap_chars must be in [0, max_chars), got {overlap_chars}")
    drafts: list[ChunkDraft] = []
    for section in runbook.sections:
        pieces = _merge_tiny(list(_split_section(section.text, max_chars)), max_chars)
        for content in _pack(pieces, max_chars, overlap_chars):
            drafts.append(
                ChunkDraft(ordinal=len(drafts), heading_path=section.heading_path, content=content)
            )
    return drafts


def _split_section(text: str, limit: int) -> Iterator[_Piece]:
    previous_end: int | None = None
    lead = ""
    for block in _blocks(text):
        gap = "" if previous_end is None else text[previous_end : block.start]
        previous_end = block.end
        body = text[block.start : block.end]
        if len(body) <= limit:
            yield _Piece(body, gap, is_code=block.fence is not None)
        elif block.fence is not None:
            # Room is kept in the first part for a tiny lead-in ("Run:"), so the two stay together.
            reserve = len(lead) + len(gap) if lead else 0
            yield from _split_fence(body, block.fence, gap, limit, reserve=reserve)
        else:
            cuts = _TABLE_CUTS if body.startswith("|") else _PROSE_CUTS
            yield from _split_prose(body, gap, limit, cuts)
        lead = body if len(body.strip()) < MIN_CHUNK_CHARS else ""


def _blocks(text: str) -> Iterator[_Block]:
    """Paragraphs, list items and fenced code blocks, as offsets into ``text``."""
    start: int | None = None
    fence: re.Match[str] | None = None
    offset = previous_end = 0
    for line in text.split("\n"):
        end = offset + len(line)
        if fence is not None:
            if _closes(fence, line) and start is not None:
                yield _Block(start, end, fence)
                start, fence = None, None
        else:
            opening = _opening_fence(line)
            blank = not line.strip()
            # A blank line ends a paragraph; a fence or a list item ends it and starts another.
            if start is not None and (blank or opening is not None or _LIST_ITEM.match(line)):
                yield _Block(start, previous_end, None)
                start = None
            if start is None and not blank:
                start, fence = offset, opening
        previous_end = end
        offset = end + 1
    if start is not None:
        yield _Block(start, previous_end, fence)


def _opening_fence(line: str) -> re.Match[str] | None:
    match = _FENCE_OPEN.fullmatch(line)
    # CommonMark: a backtick fence's info string cannot hold a backtick (that is inline code).
    if match is None or (match["marker"][0] == "`" and "`" in match["info"]):
        return None
    return match


def _closes(fence: re.Match[str], line: str) -> bool:
    marker = fence["marker"]
    stripped = line.strip()
    return len(stripped) >= len(marker) and stripped == marker[0] * len(stripped)


def _split_fence(
    body: str, fence: re.Match[str], gap: str, limit: int, *, reserve: int
) -> Iterator[_Piece]:
    """Cut an oversized code block on line boundaries, each part fenced again so it renders."""
    lines = body.split("\n")
    opening, code = lines[0], lines[1:]
    closing = fence["indent"] + fence["marker"]
    if code and _closes(fence, code[-1]):
        closing = code.pop()
    if len(opening) + len(closing) > limit // 4:
        opening = closing = fence["marker"]
    budget = limit - len(opening) - len(closing) - 2
    first_budget = budget - reserve if reserve < budget // 2 else budget
    parts: list[list[str]] = [[]]
    size = 0
    for line in code:
        # Only a single line longer than the whole budget is ever cut inside.
        for cut in [line[i : i + budget] for i in range(0, len(line), budget)] or [""]:
            added = len(cut) + 1
            part_budget = first_budget if len(parts) == 1 else budget
            if parts[-1] and size + added > part_budget + 1:
                parts.append([])
                size = 0
            parts[-1].append(cut)
            size += added
    for index, part in enumerate(parts):
        text = "\n".join([opening, *part, closing])
        yield _Piece(text, gap if index == 0 else "\n", is_code=True)


def _split_prose(
    text: str, gap: str, limit: int, cuts: tuple[re.Pattern[str], ...]
) -> Iterator[_Piece]:
    """Cut at the first kind of boundary in ``cuts`` that occurs, the finer ones only if needed."""
    if len(text) <= limit:
        yield _Piece(text, gap, is_code=False)
        return
    if not cuts:
        for i in range(0, len(text), limit):
            yield _Piece(text[i : i + limit], gap if i == 0 else "", is_code=False)
        return
    position = 0
    for match in cuts[0].finditer(text):
        if match.start() > position:
            yield from _split_prose(text[position : match.start()], gap, limit, cuts[1:])
            gap = match.group()
        else:
            gap += match.group()
        position = match.end()
    if position < len(text):
        yield from _split_prose(text[position:], gap, limit, cuts[1:])


def _merge_tiny(pieces: list[_Piece], limit: int) -> list[_Piece]:
    """Join each tiny piece to the next one (a lead-in belongs to what it introduces), else to
    the previous one, whenever the result still fits."""
    merged: list[_Piece] = []
    pending: _Piece | None = None
    for piece in pieces:
        if pending is not None:
            if _joined_size(pending, piece) <= limit:
                piece = _join(pending, piece)
            elif merged and _joined_size(merged[-1], pending) <= limit:
                merged[-1] = _join(merged[-1], pending)
            else:
                merged.append(pending)
            pending = None
        if len(piece.text.strip()) < MIN_CHUNK_CHARS:
            pending = piece
        else:
            merged.append(piece)
    if pending is not None:
        if merged and _joined_size(merged[-1], pending) <= limit:
            merged[-1] = _join(merged[-1], pending)
        else:
            merged.append(pending)
    return merged


def _joined_size(first: _Piece, second: _Piece) -> int:
    return len(first.text) + len(second.gap) + len(second.text)


def _join(first: _Piece, second: _Piece) -> _Piece:
    return _Piece(first.text + second.gap + second.text, first.gap, first.is_code or second.is_code)


def _pack(pieces: list[_Piece], limit: int, overlap_chars: int) -> list[str]:
    """Fill chunks greedily; each chunk after the first opens with the prose tail of the last."""
    chunks: list[str] = []
    current = ""
    # The prose at the end of ``current``; overlap never reaches back into a code block.
    tail = ""
    for piece in pieces:
        if current and len(current) + len(piece.gap) + len(piece.text) <= limit:
            current += piece.gap + piece.text
            tail = "" if piece.is_code else (tail + piece.gap if tail else "") + piece.text
            continue
        if current:
            chunks.append(current.rstrip())
        room = min(overlap_chars, limit - len(piece.gap) - len(piece.text))
        # An overlap squeezed below a useful size would only be a fragment of a sentence.
        lead = _overlap(tail, room) if room >= min(overlap_chars, MIN_CHUNK_CHARS) else ""
        current = lead + piece.gap + piece.text if lead else piece.text
        tail = "" if piece.is_code else current
    if current:
        chunks.append(current.rstrip())
    return chunks


def _overlap(tail: str, room: int) -> str:
    """The longest end of ``tail`` within ``room`` that starts a sentence, else a word."""
    if room <= 0 or not tail:
        return ""
    if len(tail) <= room:
        return tail
    first_allowed = len(tail) - room
    for boundary in (_SENTENCE_GAP, _WORD_GAP):
        for match in boundary.finditer(tail):
            start = match.end()
            # An odd number of backticks after the cut means it fell inside inline code.
            if first_allowed <= start < len(tail) and tail.count("`", start) % 2 == 0:
                return tail[start:]
    return ""
