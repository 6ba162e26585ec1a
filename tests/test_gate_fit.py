"""``rag.evaluation.gate_fit``: the refit sees what the service decides on, and says how it
generalises."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from rag import RagService
from rag.evaluation.evaluate import GoldenQuestion, load_golden
from rag.evaluation.gate_fit import gate_model, leave_one_tenant_out, observe
from rag.gate.decision import GateModel
from tests.conftest import GOLDEN

RUNBOOK_URL_POST = (
    "[FIRING:1] SLOBudgetBurn (severity=critical)\n"
    "runbook_url = https://wiki.globex.example/runbooks/batch/cron-job-failures\n"
)


@pytest.mark.usefixtures("demo_corpus")
async def test_refit_reads_the_features_the_service_decided_on(service: RagService) -> None:
    questions = [
        GoldenQuestion(id="a", tenant="globex", question=RUNBOOK_URL_POST, expect="abstain"),
        GoldenQuestion(
            id="b", tenant="globex", question="kube-pod-crash-looping fired", expect="abstain"
        ),
        GoldenQuestion(id="c", tenant="acme", question="redis is evicting keys", expect="abstain"),
    ]
    observations = await observe(service, questions)

    for observation, golden in zip(observations, questions, strict=True):
        decided = await service.retrieve(golden.tenant, service.check_question(golden.question))
        assert observation.gate_features() == dict(decided.gate.features)
    # The alert's own search text, with the runbook its runbook_url resolved to.
    assert "cron job failures" in observations[0].query
    assert observations[0].gate_features()["resolved"] == 1.0


@pytest.mark.usefixtures("demo_corpus")
async def test_stored_threshold_answers_the_rows_the_fit_counted_as_answered(
    service: RagService, tmp_path: Path
) -> None:
    questions = load_golden(GOLDEN)[:40]
    observations = await observe(service, questions)
    fitted = gate_model(observations, "test-model", 0.9, [str(GOLDEN)])
    path = tmp_path / "gate_model.json"
    path.write_text(json.dumps(fitted), encoding="utf-8")
    model = GateModel.load(path)

    answerable = [o for o in observations if o.answerable and o.candidates.evidence]
    answered = [o for o in answerable if model.probability(o.gate_features()) >= model.threshold]
    assert len(answered) / len(answerable) == pytest.approx(fitted["fitted_on"]["coverage"], 1e-3)
    assert len(answered) / len(answerable) >= 0.9


def test_leave_one_tenant_out_scores_each_tenant_with_a_gate_fitted_on_the_others() -> None:
    # One informative feature; tenant "c" alone has it inverted, so a gate fitted on the other
    # three gets every one of c's rows wrong, and one fitted with c still gets "a" right.
    usual = [[1.0], [1.1], [-1.0], [-1.1]]
    x = np.array(usual * 2 + [[-1.0], [-1.1], [1.0], [1.1]] + usual)
    y = np.array([1.0, 1.0, 0.0, 0.0] * 4)
    tenants = np.array([t for t in "abcd" for _ in range(4)])

    held_out = leave_one_tenant_out(x, y, tenants, min_coverage=0.6)

    assert set(held_out) == {"a", "b", "c", "d"}
    assert held_out["c"] == {"coverage": 0.0, "abstain_accuracy": 0.0}
    assert held_out["a"] == {"coverage": 1.0, "abstain_accuracy": 1.0}
