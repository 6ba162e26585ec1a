"""``runbook eval``: golden questions through retrieval and the gate, scored (no model needed).

With ``answers`` every answerable question also goes through ``RagService.ask`` (the configured
answerer and citation verification), and the citations are scored against the gold labels.
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from rag.answering.answers import AskResult
from rag.answering.runbook_sections import gold_in_card
from rag.errors import ConfigurationError
from rag.retrieval.evidence import Evidence
from rag.service import RagService, Retrieval


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
    service: RagService, questions: list[GoldenQuestion], *, k: int, answers: bool = False
) -> dict[str, Any]:
    """Score retrieval and the gate; with ``answers``, also the full answer path's citations."""
    per_question: list[dict[str, Any]] = []
    retrieve_ms: list[float] = []
    for golden in questions:
        retrieval = await service.retrieve(
            golden.tenant, service.check_question(golden.question), service=golden.service
        )
        retrieve_ms.append(retrieval.timings_ms["retrieve"])
        entry = _score_retrieval(golden, retrieval, k)
        if answers and golden.expect != "abstain":
            result = await service.ask(golden.tenant, golden.question, service=golden.service)
            entry.update(_score_answer(golden, result))
        per_question.append(entry)
    return {
        **_summary(questions, per_question, answers),
        "k": k,
        "retrieval_ms": _percentiles(retrieve_ms),
        "per_question": per_question,
    }


def _score_retrieval(golden: GoldenQuestion, retrieval: Retrieval, k: int) -> dict[str, Any]:
    abstained = retrieval.gate.reason is not None
    top = retrieval.candidates.evidence[:k]
    entry: dict[str, Any] = {
        "id": golden.id,
        "tenant": golden.tenant,
        "abstained": abstained,
        "gate_reason": retrieval.gate.reason,
        "best_cosine": round(retrieval.gate.best_cosine, 4),
        "term_coverage": round(retrieval.gate.term_coverage, 3),
        "answer_probability": round(retrieval.gate.probability, 4),
        "gate_features": {name: round(v, 4) for name, v in retrieval.gate.features},
        "gate_rules": {name: round(v, 4) for name, v in retrieval.gate.rules},
        "top": [e.document_id + " › " + " › ".join(e.heading_path[1:]) for e in top[:3]],
    }
    if retrieval.alert is not None:
        entry["alert"] = retrieval.alert.name
    if golden.expect == "abstain":
        entry["expect"] = "abstain"
        entry["correct"] = abstained
        return entry
    targets = golden.targets()
    rank = next((i for i, e in enumerate(top, start=1) if any(t.matches(e) for t in targets)), None)
    documents = {t.document for t in targets}
    entry["rank"] = rank
    entry["document_rank"] = next(
        (i for i, e in enumerate(top, start=1) if e.document_id in documents), None
    )
    entry["correct"] = rank is not None and not abstained
    return entry


def _score_answer(golden: GoldenQuestion, result: AskResult) -> dict[str, Any]:
    targets = golden.targets()
    documents = {t.document for t in targets}
    cited = [c.evidence for c in result.citations]
    entry: dict[str, Any] = {
        "answered": result.status == "answered",
        "first_citation_in_gold_document": bool(cited) and cited[0].document_id in documents,
        "citation_in_gold_section": any(t.matches(e) for e in cited for t in targets),
    }
    view = result.runbook
    if view is not None and view.document_id in documents:
        # The card's runbook is right: is the gold section shown, or behind a section button?
        wanted = [t.section for t in targets if t.document == view.document_id]
        entry["gold_section_in_card"] = gold_in_card(view, wanted)
    return entry


def _summary(
    questions: list[GoldenQuestion], entries: list[dict[str, Any]], answers: bool
) -> dict[str, Any]:
    answerable = [e for e in entries if e.get("expect") != "abstain"]
    unanswerable = [e for e in entries if e.get("expect") == "abstain"]
    abstentions = [e for e in entries if e["abstained"]]
    right_abstentions = sum(1 for e in unanswerable if e["abstained"])
    summary: dict[str, Any] = {
        "recall_at_k": _ratio(sum(e["rank"] is not None for e in answerable), len(answerable)),
        "mrr": _ratio(sum(1.0 / e["rank"] for e in answerable if e["rank"]), len(answerable)),
        "abstain_accuracy": _ratio(right_abstentions, len(unanswerable)),
        "answer_coverage": _ratio(sum(not e["abstained"] for e in answerable), len(answerable)),
        "n_answerable": len(answerable),
        "n_abstain": len(unanswerable),
        "document_recall_at_k": _ratio(
            sum(e["document_rank"] is not None for e in answerable), len(answerable)
        ),
        "document_mrr": _ratio(
            sum(1.0 / e["document_rank"] for e in answerable if e["document_rank"]),
            len(answerable),
        ),
        # Abstaining is the positive class: how often an abstention was right, and how many of
        # the questions that should abstain did.
        "abstain_precision": _ratio(right_abstentions, len(abstentions)),
        "abstain_recall": _ratio(right_abstentions, len(unanswerable)),
    }
    if answers:
        answered = [e for e in answerable if e.get("answered")]
        summary["n_answered"] = len(answered)
        summary["first_citation_in_gold_document"] = _ratio(
            sum(e["first_citation_in_gold_document"] for e in answered), len(answered)
        )
        summary["citation_in_gold_section"] = _ratio(
            sum(e["citation_in_gold_section"] for e in answered), len(answered)
        )
        # Of the answered questions whose card names the right runbook.
        right = [e for e in answered if "gold_section_in_card" in e]
        summary["n_right_runbook"] = len(right)
        summary["gold_section_in_card"] = _ratio(
            sum(e["gold_section_in_card"] for e in right), len(right)
        )
    return summary


def _ratio(part: float, whole: int) -> float:
    return round(part / whole, 4) if whole else 0.0


def _percentiles(values: list[float]) -> dict[str, float]:
    if len(values) < 2:
        return {"p50": values[0] if values else 0.0, "p95": values[0] if values else 0.0}
    cuts = statistics.quantiles(values, n=100, method="inclusive")
    return {"p50": round(cuts[49], 2), "p95": round(cuts[94], 2)}


def dumps(report: dict[str, Any]) -> str:
    return json.dumps(report, indent=2)
