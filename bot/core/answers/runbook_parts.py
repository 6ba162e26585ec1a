"""A runbook section as every card shows it: paragraphs and whole code blocks, each with what
its commands do that changes state, cut to a size at a paragraph boundary, never in code."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from bot.core.answers.citations import state_label
from rag import Citation, RunbookSection, RunbookView, code_changes_state, section_heading

_FENCE = re.compile(r"[ \t]*(`{3,}|~{3,})")
_BLANK_LINES = re.compile(r"\n[ \t]*\n")
_HEADING = re.compile(r"#{1,6}[ \t]+(.+?)[ \t]*")


@dataclass(frozen=True)
class Part:
    """A paragraph (``code`` False, as written, inline code included), a sub-heading
    (``heading``, without its ``#`` marks) or the lines of a fenced code block (without its
    fences); ``label`` is the changes-state label it wears, if any."""

    text: str
    code: bool
    label: str | None
    heading: bool = False


@dataclass(frozen=True)
class ShownSection:
    """The section a card shows: its index, its parts within the size asked for, and whether
    any were left out (the card then links to the runbook)."""

    index: int
    section: RunbookSection
    parts: tuple[Part, ...]
    truncated: bool


# Runbook sections repeat across answers (the same runbooks answer an alert each time it
# fires), and reading their code for state changes is most of a card's cost: cut each once.
@lru_cache(maxsize=1024)
def section_parts(text: str) -> tuple[Part, ...]:
    """``text`` cut into paragraphs and fenced code blocks, in order."""
    return tuple(_section_parts(text))


def _section_parts(text: str) -> list[Part]:
    parts: list[Part] = []
    prose: list[str] = []
    code: list[str] | None = None
    fence = ""
    for line in text.split("\n"):
        opened = _FENCE.match(line)
        if code is None and opened is not None:
            parts += _paragraphs("\n".join(prose))
            prose, code, fence = [], [], opened.group(1)
        elif code is not None and _closes(fence, line):
            parts.append(_code(code, fence))
            code = None
        elif code is not None:
            code.append(line)
        else:
            prose.append(line)
    if code is not None:  # an unclosed fence runs to the end, as Markdown renders it
        parts.append(_code(code, fence))
    return parts + _paragraphs("\n".join(prose))


def shown_section(
    view: RunbookView, section: int | None, *, budget: int, size: Callable[[Part], int]
) -> ShownSection:
    """Section ``section`` of ``view`` (its best one when that is not a valid index), its parts
    within ``budget`` as ``size`` counts them; the first part always shows, clipped by the
    caller if need be."""
    index = section if section is not None and 0 <= section < len(view.sections) else view.best
    chosen = view.sections[index]
    parts = section_parts(chosen.text)
    kept = fit(parts, budget, size)
    return ShownSection(index, chosen, tuple(kept), len(kept) < len(parts))


def fit(parts: Sequence[Part], budget: int, size: Callable[[Part], int]) -> list[Part]:
    kept: list[Part] = []
    for part in parts:
        cost = size(part)
        if kept and cost > budget:
            break
        kept.append(part)
        budget -= cost
    return kept


def cited_numbers(view: RunbookView, index: int, citations: Iterable[Citation]) -> list[int]:
    """The citation numbers of the answer that quote section ``index`` of ``view``."""
    heading = view.sections[index].heading
    return sorted(
        {
            c.n
            for c in citations
            if c.evidence.document_id == view.document_id
            and section_heading(c.evidence.heading_path, title=view.title) == heading
        }
    )


def _closes(fence: str, line: str) -> bool:
    """CommonMark: the same character, at least as many, nothing else on the line."""
    stripped = line.strip()
    return len(stripped) >= len(fence) and stripped == fence[0] * len(stripped)


def _paragraphs(text: str) -> list[Part]:
    parts: list[Part] = []
    for paragraph in _BLANK_LINES.split(text):
        lines: list[str] = []
        for line in paragraph.strip("\n").split("\n"):
            if heading := _HEADING.fullmatch(line):
                parts += _paragraph("\n".join(lines))
                parts.append(Part(heading.group(1), False, None, heading=True))
                lines = []
            else:
                lines.append(line)
        parts += _paragraph("\n".join(lines))
    return parts


def _paragraph(text: str) -> list[Part]:
    return [Part(text, False, _label(text))] if text.strip() else []


def _code(lines: list[str], fence: str) -> Part:
    body = "\n".join(lines)
    # Read with its fences, as the state-change table reads quoted code.
    changes = code_changes_state(f"{fence}\n{body}\n{fence}")
    return Part(body, True, state_label(changes) if changes else None)


def _label(text: str) -> str | None:
    changes = code_changes_state(text)
    return state_label(changes) if changes else None
