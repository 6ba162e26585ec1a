"""Answer values: what an answerer drafts, what verification keeps, what ``ask`` returns."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol

from rag.answering.runbook_view import RunbookView
from rag.ingest.staleness import age_in_days
from rag.retrieval.evidence import Evidence, Excerpt

DraftStatus = Literal["answered", "not_in_sources"]
AskStatus = Literal["answered", "abstained", "error"]


@dataclass(frozen=True)
class DraftCitation:
    n: int
    quote: str


@dataclass(frozen=True)
class Draft:
    """An answerer's output before verification: text with ``[n]`` markers and its quotes."""

    status: DraftStatus
    text: str
    citations: tuple[DraftCitation, ...]
    provider: str
    input_tokens: int = 0
    output_tokens: int = 0


class Answerer(Protocol):
    """Writes a draft from numbered excerpts; ``correction`` names what the last draft got wrong."""

    name: str

    async def answer(
        self, question: str, excerpts: Sequence[Excerpt], *, correction: str | None = None
    ) -> Draft: ...

    async def aclose(self) -> None:
        """Release connections the answerer holds (an HTTP client), if any."""


@dataclass(frozen=True)
class Citation:
    """A verified citation: its quote is a contiguous excerpt of chunk ``chunk_id``."""

    n: int
    quote: str
    evidence: Evidence


@dataclass(frozen=True)
class DroppedCitation:
    n: int
    reason: str


@dataclass(frozen=True)
class AskResult:
    status: AskStatus
    reason_code: str | None
    answer: str
    citations: tuple[Citation, ...]
    evidence: tuple[Evidence, ...]
    provider: str
    timings_ms: dict[str, float]
    retryable: bool = False
    tenant: str = ""
    service: str | None = None
    dropped_citations: tuple[DroppedCitation, ...] = field(default=())
    fallback_reason: str | None = None
    answer_id: str | None = None
    usage: dict[str, int] = field(default_factory=dict)
    # The searched text's embedding: the gap report groups unanswered questions by meaning
    # with it long after their text is gone (bot/core/answers/facts.py keeps it).
    question_vector: tuple[float, ...] | None = field(default=None, compare=False, repr=False)
    # The runbook the answer names, its sections read from the store (the card navigates them).
    runbook: RunbookView | None = field(default=None, compare=False, repr=False)
    # Who to contact when the question asks whom to page and the lead runbook names no
    # escalation path: its owner (``rag.retrieval.escalation.owner_to_contact``); cards show
    # it, labelled as the owner.
    owner_contact: str | None = None


def ask_result_json(result: AskResult) -> dict[str, object]:
    """The ``runbook ask --json`` object (a contract: see docs/architecture.md)."""
    return {
        "status": result.status,
        "reason_code": result.reason_code,
        "answer": result.answer,
        "citations": [
            {
                "n": c.n,
                "chunk_id": c.evidence.chunk_id,
                "document_id": c.evidence.document_id,
                "title": c.evidence.title,
                "heading_path": list(c.evidence.heading_path),
                "quote": c.quote,
                "url": c.evidence.url,
                "updated_days_ago": age_in_days(c.evidence.updated),
            }
            for c in result.citations
        ],
        "evidence": [
            {
                "chunk_id": e.chunk_id,
                "document_id": e.document_id,
                "heading_path": list(e.heading_path),
                "score": round(e.score, 6),
                "cosine": round(e.cosine, 4),
                "vector_rank": e.vector_rank,
                "keyword_rank": e.keyword_rank,
                "hit_reasons": list(e.hit_reasons),
            }
            for e in result.evidence
        ],
        "provider": result.provider,
        "timings_ms": result.timings_ms,
        "retryable": result.retryable,
        "fallback_reason": result.fallback_reason,
        "citations_dropped": len(result.dropped_citations),
        "answer_id": result.answer_id,
    }
