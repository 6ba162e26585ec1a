"""Citations grouped by their number, the unit every surface shows a source line for."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from rag import CHANGES_STATE, AnswerStep, Citation, Evidence, answer_steps


@dataclass(frozen=True)
class Source:
    """One citation number: several quotes may cite the same excerpt. ``changes``: what the
    commands the answer quotes from it do that changes state (empty for read-only ones)."""

    n: int
    evidence: Evidence
    quotes: tuple[str, ...]
    changes: tuple[str, ...] = ()


def group_citations(citations: Iterable[Citation], *, answer: str = "") -> list[Source]:
    """One source per citation number; ``answer`` says which of them quote state changes."""
    by_n: dict[int, list[Citation]] = {}
    for citation in citations:
        by_n.setdefault(citation.n, []).append(citation)
    changes: dict[int, dict[str, None]] = {}
    for step in _steps(answer):
        for n in step.numbers:
            changes.setdefault(n, {}).update(dict.fromkeys(step.changes))
    return [
        Source(
            n,
            group[0].evidence,
            tuple(dict.fromkeys(c.quote for c in group)),
            tuple(changes.get(n, {})),
        )
        for n, group in sorted(by_n.items())
    ]


def state_label(changes: tuple[str, ...]) -> str:
    """``⚠️ changes state (deletes, kills)``: the label a step or quote with such commands wears."""
    return f"{CHANGES_STATE} ({', '.join(changes)})"


def labelled_steps(answer: str) -> list[tuple[str | None, AnswerStep]]:
    """The answer's steps, each with the label to show above it (None for read-only ones)."""
    return [(state_label(step.changes) if step.changes else None, step) for step in _steps(answer)]


# A card reads its answer's steps twice (its sources' labels, its answer's lines), and an alert
# that fires again gets the same answer: its commands are read for state changes once.
@lru_cache(maxsize=256)
def _steps(answer: str) -> tuple[AnswerStep, ...]:
    return tuple(answer_steps(answer))
