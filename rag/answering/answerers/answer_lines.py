"""What an extractive answer shows so far: its lines, their citations and the room left."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from rag.answering.answers import DraftCitation

# The answer quotes up to this many lines (a code block counts its own lines).
MAX_LEAD_LINES = 14


@dataclass
class AnswerLines:
    """What the answer shows so far: its lines, their citations and the lines they use."""

    lines: list[str] = field(default_factory=list)
    citations: list[DraftCitation] = field(default_factory=list)
    used: int = 0

    def add(self, text: str, citations: Sequence[DraftCitation], cost: int) -> None:
        self.lines.append(text)
        self.citations.extend(citations)
        self.used += cost

    @property
    def room(self) -> int:
        return MAX_LEAD_LINES - self.used
