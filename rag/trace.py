"""Compact per-ask trace rows: ids, scores, ranks and timings, no question text by default."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from rag.answering.answers import AskResult
from rag.retrieval.retrieve import Candidates
from rag.store.connection import Store

_INSERT = """
INSERT INTO retrieval_traces (tenant_id, trace_id, status, reason_code, fallback_reason, service,
    provider, timings_ms, candidates, evidence, input_tokens, output_tokens, citations_dropped,
    question, answer)
VALUES (%(tenant)s, %(trace_id)s, %(status)s, %(reason_code)s, %(fallback_reason)s, %(service)s,
    %(provider)s, %(timings_ms)s, %(candidates)s, %(evidence)s, %(input_tokens)s,
    %(output_tokens)s, %(citations_dropped)s, %(question)s, %(answer)s)
"""


@dataclass(frozen=True)
class TraceRecord:
    params: dict[str, Any]

    @classmethod
    def from_result(
        cls,
        trace_id: str,
        result: AskResult,
        *,
        candidates: Candidates | None,
        gate_cosine: float | None,
        question: str | None,
    ) -> TraceRecord:
        evidence = [
            {
                "chunk_id": e.chunk_id,
                "document_id": e.document_id,
                "score": round(e.score, 5),
                "cosine": round(e.cosine, 4),
                "vector_rank": e.vector_rank,
                "keyword_rank": e.keyword_rank,
                "hit_reasons": list(e.hit_reasons),
                "cited": any(c.evidence.chunk_id == e.chunk_id for c in result.citations),
            }
            for e in result.evidence
        ]
        counts = {
            "vector": candidates.vector_hits if candidates else 0,
            "keyword": candidates.keyword_hits if candidates else 0,
            "fused": len(candidates.evidence) if candidates else 0,
            "best_cosine": gate_cosine,
        }
        return cls(
            {
                "tenant": result.tenant,
                "trace_id": trace_id,
                "status": result.status,
                "reason_code": result.reason_code,
                "fallback_reason": result.fallback_reason,
                "service": result.service,
                "provider": result.provider,
                "timings_ms": json.dumps(result.timings_ms),
                "candidates": json.dumps(counts),
                "evidence": json.dumps(evidence),
                "input_tokens": result.usage.get("input_tokens", 0),
                "output_tokens": result.usage.get("output_tokens", 0),
                "citations_dropped": len(result.dropped_citations),
                "question": question,
                "answer": result.answer if question is not None else None,
            }
        )


async def write_trace(store: Store, record: TraceRecord) -> None:
    async with store.pool.connection() as conn:
        await conn.execute(_INSERT, record.params)
