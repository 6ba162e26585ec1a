"""An ``AskResult`` as JSON and back: the stored inputs of a card, so buttons can re-render it."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from rag import AskResult, Citation, Evidence


def result_to_json(result: AskResult) -> dict[str, Any]:
    """What rendering needs; timings, usage and dropped citations stay in the trace."""
    return {
        "status": result.status,
        "reason_code": result.reason_code,
        "answer": result.answer,
        "citations": [
            {"n": c.n, "quote": c.quote, "evidence": _evidence_to_json(c.evidence)}
            for c in result.citations
        ],
        "evidence": [_evidence_to_json(e) for e in result.evidence],
        "provider": result.provider,
        "retryable": result.retryable,
        "tenant": result.tenant,
        "service": result.service,
        "fallback_reason": result.fallback_reason,
        "answer_id": result.answer_id,
    }


def result_from_json(data: dict[str, Any]) -> AskResult:
    return AskResult(
        status=data["status"],
        reason_code=data["reason_code"],
        answer=data["answer"],
        citations=tuple(
            Citation(n=c["n"], quote=c["quote"], evidence=_evidence_from_json(c["evidence"]))
            for c in data["citations"]
        ),
        evidence=tuple(_evidence_from_json(e) for e in data["evidence"]),
        provider=data["provider"],
        timings_ms={},
        retryable=data["retryable"],
        tenant=data["tenant"],
        service=data["service"],
        fallback_reason=data["fallback_reason"],
        answer_id=data["answer_id"],
    )


def _evidence_to_json(evidence: Evidence) -> dict[str, Any]:
    return asdict(evidence)


def _evidence_from_json(data: dict[str, Any]) -> Evidence:
    return Evidence(
        **{
            **data,
            "heading_path": tuple(data["heading_path"]),
            "hit_reasons": tuple(data.get("hit_reasons", ())),
        }
    )
