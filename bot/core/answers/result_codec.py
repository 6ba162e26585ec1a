"""An ``AskResult`` as stored JSON and back: the card's inputs by reference, not by copy.

Stored: status, answer text, scores and the ids of the evidence chunks, and each citation as its
chunk id plus the position of its verified quote (and whether the quote was reflowed, so it
reads back as first shown), and the runbook owner a who-do-I-page answer names (absent from
rows written before it was kept: read as None). Runbook text is not stored: a redraw re-reads
the chunks under the tenant's row-level security (``rag.load_chunks``), so a runbook updated or
pruned since the answer says so on the card, and a deleted one is no longer shown.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from rag import AskResult, Citation, CitedChunk, Evidence, QuoteSpan, locate_quote, quote_at

FORMAT = 2
Change = Literal["updated", "removed", "gone"]


@dataclass(frozen=True)
class SourceChange:
    """What happened to the runbook behind citation ``n`` since the answer was written."""

    n: int
    change: Change


@dataclass(frozen=True)
class Redrawn:
    result: AskResult
    changes: tuple[SourceChange, ...]


def result_to_json(result: AskResult) -> dict[str, Any]:
    """What redrawing needs; timings, usage and dropped citations stay in the trace."""
    return {
        "v": FORMAT,
        "status": result.status,
        "reason_code": result.reason_code,
        "answer": result.answer,
        "citations": [_citation_to_json(c) for c in result.citations],
        "evidence": [_scores_to_json(e) for e in result.evidence],
        "provider": result.provider,
        "retryable": result.retryable,
        "tenant": result.tenant,
        "service": result.service,
        "fallback_reason": result.fallback_reason,
        "answer_id": result.answer_id,
        "owner_contact": result.owner_contact,
    }


def chunk_ids_of(data: dict[str, Any]) -> set[int]:
    """Every chunk a stored result refers to (what ``result_from_json`` needs loaded)."""
    cited = {int(c["chunk_id"]) for c in data["citations"]}
    return cited | {int(e["chunk_id"]) for e in data["evidence"]}


def result_from_json(data: dict[str, Any], chunks: Mapping[int, CitedChunk]) -> Redrawn:
    """The result as it reads now: ``chunks`` as loaded for the tenant; absent ones are gone."""
    scores = {int(e["chunk_id"]): e for e in data["evidence"]}
    evidence = tuple(
        _evidence(chunks[chunk_id], scores[chunk_id]) for chunk_id in scores if chunk_id in chunks
    )
    citations: list[Citation] = []
    changes: dict[int, Change] = {}
    for cited in data["citations"]:
        n, chunk = int(cited["n"]), chunks.get(int(cited["chunk_id"]))
        quote = _quote(chunk, cited) if chunk is not None else None
        if chunk is None or quote is None:
            changes[n] = "gone"
            continue
        if chunk.superseded:
            changes.setdefault(n, "updated" if chunk.current_version is not None else "removed")
        ranked = scores.get(chunk.chunk_id, {})
        citations.append(Citation(n=n, quote=quote, evidence=_evidence(chunk, ranked)))
    result = AskResult(
        status=data["status"],
        reason_code=data["reason_code"],
        answer=data["answer"],
        citations=tuple(citations),
        evidence=evidence,
        provider=data["provider"],
        timings_ms={},
        retryable=data["retryable"],
        tenant=data["tenant"],
        service=data["service"],
        fallback_reason=data["fallback_reason"],
        answer_id=data["answer_id"],
        owner_contact=data.get("owner_contact"),
    )
    return Redrawn(result, tuple(SourceChange(n, c) for n, c in sorted(changes.items())))


def _citation_to_json(citation: Citation) -> dict[str, Any]:
    span = locate_quote(citation.evidence.content, citation.quote)
    return {
        "n": citation.n,
        "chunk_id": citation.evidence.chunk_id,
        "quote": [span.start, span.end] if span is not None else None,
        "reflowed": span is not None and span.reflowed,
    }


def _scores_to_json(evidence: Evidence) -> dict[str, Any]:
    return {
        "chunk_id": evidence.chunk_id,
        "cosine": evidence.cosine,
        "vector_rank": evidence.vector_rank,
        "keyword_rank": evidence.keyword_rank,
        "score": evidence.score,
        "hit_reasons": list(evidence.hit_reasons),
    }


def _quote(chunk: CitedChunk, cited: Mapping[str, Any]) -> str | None:
    span = cited["quote"]
    if not (isinstance(span, list) and len(span) == 2):
        return None
    reflowed = bool(cited.get("reflowed", False))
    return quote_at(chunk.content, QuoteSpan(int(span[0]), int(span[1]), reflowed=reflowed))


def _evidence(chunk: CitedChunk, ranked: Mapping[str, Any]) -> Evidence:
    return Evidence(
        chunk_id=chunk.chunk_id,
        document_id=chunk.document_id,
        version=chunk.version,
        title=chunk.title,
        heading_path=tuple(chunk.heading_path),
        content=chunk.content,
        url=chunk.url,
        owner=chunk.owner,
        updated=chunk.updated,
        service=chunk.service,
        cosine=float(ranked.get("cosine", 0.0)),
        vector_rank=ranked.get("vector_rank"),
        keyword_rank=ranked.get("keyword_rank"),
        score=float(ranked.get("score", 0.0)),
        hit_reasons=tuple(ranked.get("hit_reasons", ())),
    )
