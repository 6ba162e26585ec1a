"""A cited runbook as a card shows it: its top-level sections and which one the answer cites.

Values only; ``rag.answering.runbook_sections`` rebuilds them from the stored chunks.
"""

from __future__ import annotations

from dataclasses import dataclass

# The card offers at most this many sections (Slack: 25 elements per actions block); the
# answer's own section is always among them. The eval counts exactly what the card offers.
MAX_SECTIONS = 25


@dataclass(frozen=True)
class RunbookSection:
    """One top-level section: its heading, its text verbatim (sub-headings on lines of their
    own, Markdown style) and every heading inside it, the top-level one first."""

    heading: str
    text: str
    headings: tuple[str, ...]


@dataclass(frozen=True)
class RunbookView:
    """The runbook an answer names; ``best`` is the index of the section the answer cites."""

    document_id: str
    title: str
    url: str | None
    sections: tuple[RunbookSection, ...]
    best: int = 0

    def offered(self) -> list[int]:
        """Indexes of the sections the card offers, in runbook order (the best one included)."""
        first = list(range(min(len(self.sections), MAX_SECTIONS)))
        if self.best not in first and 0 <= self.best < len(self.sections):
            first[-1] = self.best
        return first
