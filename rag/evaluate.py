"""``runbook eval``: golden questions through retrieval and the gate, scored (no model needed)."""

from __future__ import annotations

import json
import statistics
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from rag.errors import ConfigurationError
from rag.evidence import Evidence
from rag.service import RagService


class Target(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    document: str
    section: str | None = None

    def matches(self, evidence: Evidence) -> bool:
        if evidence.document_id != self.document:
            return False
        if self.section is None:
            return True
        wanted = self.section.casefold()
        return any(h.casefold() == wanted for h in evidence.heading_path)


class AnyOf(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    any_of: tuple[Target, ...]


class GoldenQuestion(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)
    id: str
    tenant: str
    question: str
    service: str | None = None
    expect: Literal["abstain"] | Target | AnyOf

    def targets(self) -> tuple[Target, ...]:
        if isinstance(self.expect, Target):
            return (self.expect,)
        if isinstance(self.expect, AnyOf):
            return self.expect.any_of
        return ()


def load_golden(path: Path) -> list[GoldenQuestion]:
    questions = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            questions.append(GoldenQuestion.model_validate_json(line))
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            raise ConfigurationError(f"{path}:{number}: {where}: {first['msg']}") from exc
    if not questions:
        raise ConfigurationError(f"{path} holds no golden questions")
    return questions


async def evaluate(
    service: RagService, questions: list[GoldenQuestion], *, k: int
) -> dict[str, Any]:
    per_question: list[dict[str, Any]] = []
    hits = 0
    reciprocal_ranks = 0.0
    abstain_correct = 0
    covered = 0
    retrieve_ms: list[float] = []
    for golden in questions:
        retrieval = await service.retrieve(
            golden.tenant, service.check_question(golden.question), service=golden.service
        )
        retrieve_ms.append(retrieval.timings_ms["retrieve"])
        abstained = retrieval.gate.reason is not None
        top = retrieval.candidates.evidence[:k]
        entry: dict[str, Any] = {
            "id": golden.id,
            "tenant": golden.tenant,
            "abstained": abstained,
            "gate_reason": retrieval.gate.reason,
            "best_cosine": round(retrieval.gate.best_cosine, 4),
            "term_coverage": round(retrieval.gate.term_coverage, 3),
            "top": [e.document_id + " › " + " › ".join(e.heading_path[1:]) for e in top[:3]],
        }
        if golden.expect == "abstain":
            entry["expect"] = "abstain"
            entry["correct"] = abstained
            abstain_correct += abstained
        else:
            rank = next(
                (
                    i
                    for i, e in enumerate(top, start=1)
                    if any(t.matches(e) for t in golden.targets())
                ),
                None,
            )
            entry["rank"] = rank
            entry["correct"] = rank is not None and not abstained
            hits += rank is not None
            reciprocal_ranks += 1.0 / rank if rank else 0.0
            covered += not abstained
        per_question.append(entry)
    n_answerable = sum(1 for q in questions if q.expect != "abstain")
    n_abstain = len(questions) - n_answerable
    return {
        "recall_at_k": _ratio(hits, n_answerable),
        "mrr": _ratio(reciprocal_ranks, n_answerable),
        "abstain_accuracy": _ratio(abstain_correct, n_abstain),
        "answer_coverage": _ratio(covered, n_answerable),
        "n_answerable": n_answerable,
        "n_abstain": n_abstain,
        "k": k,
        "retrieval_ms": _percentiles(retrieve_ms),
        "per_question": per_question,
    }


def _ratio(part: float, whole: int) -> float:
    return round(part / whole, 4) if whole else 0.0


def _percentiles(values: list[float]) -> dict[str, float]:
    if len(values) < 2:
        return {"p50": values[0] if values else 0.0, "p95": values[0] if values else 0.0}
    cuts = statistics.quantiles(values, n=100, method="inclusive")
    return {"p50": round(cuts[49], 2), "p95": round(cuts[94], 2)}


def dumps(report: dict[str, Any]) -> str:
    return json.dumps(report, indent=2)
