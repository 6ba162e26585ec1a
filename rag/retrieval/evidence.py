"""What retrieval hands to the gate and the answerers: ranked evidence and numbered excerpts."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Evidence:
    """One retrieved chunk with every signal that ranked it (the trace and the eval read these)."""

    chunk_id: int
    document_id: str
    version: int
    title: str
    heading_path: tuple[str, ...]
    content: str
    url: str | None
    owner: str | None
    updated: str | None
    service: str | None
    cosine: float
    vector_rank: int | None
    keyword_rank: int | None
    score: float
    hit_reasons: tuple[str, ...] = ()
    # The chunk's BM25 score and the question lexemes it holds (Postgres `english` lexemes).
    bm25: float = 0.0
    matched_terms: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        # Stored answers come back from JSON with lists; keep the type hashable and comparable.
        object.__setattr__(self, "matched_terms", tuple(self.matched_terms))

    @property
    def section(self) -> str:
        return " › ".join(self.heading_path) if self.heading_path else self.title

    def ranked(self, score: float, hit_reasons: tuple[str, ...]) -> Evidence:
        """This chunk with the ranker's score and reasons: ``dataclasses.replace`` without its
        field-by-field introspection (ranking makes one per candidate, ~50 per question)."""
        return Evidence(
            self.chunk_id,
            self.document_id,
            self.version,
            self.title,
            self.heading_path,
            self.content,
            self.url,
            self.owner,
            self.updated,
            self.service,
            self.cosine,
            self.vector_rank,
            self.keyword_rank,
            score,
            hit_reasons,
            self.bm25,
            self.matched_terms,
        )


@dataclass(frozen=True)
class Excerpt:
    """Evidence as shown to an answerer: numbered from 1, text possibly truncated to fit."""

    n: int
    evidence: Evidence
    text: str
    truncated: bool
