"""Fit the answerability gate (and, with ``--ranking``, the ranker first) on a dev golden set.

    RUNBOOK_DATA_DIR=... python -m rag.gate_fit evals/public/dev.jsonl [...] \
        --output rag/gate/gate_model.json [--ranking --rank-output rag/retrieval/rank_model.json]

The tenants named in the files must be ingested in that database (docs/how-it-works.md,
"Evaluation"). Every
question goes through retrieval once; the gate's features are recorded with the label
"answerable" (the golden row expects a section) or not ("abstain"), and a logistic regression
with a small L2 penalty is fitted by Newton's method. The threshold stored with it is the
smallest probability that keeps answer coverage at or above ``--min-coverage`` on the fitting
data while abstaining as often as possible on the unanswerable rows. ``--ranking`` first fits
the ranker's weights (``rag.evaluation.rank_fit``), writes them, re-ranks every observation with
them and
only then fits the gate, whose features read the top of the ranking.

Use the dev split only; the test split is for the reported figures.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from rag.evaluation.evaluate import GoldenQuestion, load_golden
from rag.evaluation.logistic import fit_logistic
from rag.evaluation.rank_fit import rank_model, ranking_case
from rag.gate.decision import FEATURES, features
from rag.retrieval.ranker import RankModel, fuse
from rag.retrieval.retrieve import Candidates
from rag.runtime import open_runtime
from rag.service import RagService, Retrieval
from rag.settings import Settings


@dataclass
class Observation:
    golden: GoldenQuestion
    retrieval: Retrieval

    @property
    def query(self) -> str:
        """The retrieval's own query (an alert post's search text, with its resolved runbook)."""
        return self.retrieval.asked.text

    @property
    def answerable(self) -> bool:
        return self.golden.expect != "abstain"

    @property
    def candidates(self) -> Candidates:
        return self.retrieval.candidates

    def gate_features(self) -> dict[str, float]:
        """What the service's gate reads for this retrieval (the same ``GateQuery``)."""
        return features(self.retrieval.asked, self.candidates)

    def reranked(self, model: RankModel) -> Observation:
        candidates = self.candidates
        evidence, relevance = (
            fuse(
                candidates.evidence,
                self.retrieval.hints,
                self.query,
                term_df=candidates.ranking_df,
                tenant_chunks=candidates.tenant_chunks,
                model=model,
                opening=opening,
            )
            for opening in (True, False)
        )
        reranked = replace(candidates, evidence=evidence, relevance=relevance)
        retrieval = replace(self.retrieval, candidates=reranked)
        return replace(self, retrieval=retrieval)


def choose_threshold(probabilities: np.ndarray, y: np.ndarray, min_coverage: float) -> float:
    """The highest threshold whose answer coverage on answerable rows is still ``min_coverage``."""
    answerable = np.sort(probabilities[y == 1])
    if answerable.size == 0:
        return 0.5
    allowed_misses = math.floor((1 - min_coverage) * answerable.size)
    # Just below the answerable probability that must still pass.
    return float(max(answerable[allowed_misses] - 1e-6, 0.0))


async def observe(service: RagService, questions: list[GoldenQuestion]) -> list[Observation]:
    found = []
    for golden in questions:
        question = service.check_question(golden.question)
        retrieval = await service.retrieve(golden.tenant, question, service=golden.service)
        found.append(Observation(golden, retrieval))
    return found


def gate_model(
    observations: list[Observation], model_id: str, min_coverage: float, sources: list[str]
) -> dict[str, Any]:
    rows = [o for o in observations if o.candidates.evidence]
    x = np.array([[o.gate_features()[n] for n in FEATURES] for o in rows])
    y = np.array([1.0 if o.answerable else 0.0 for o in rows])
    fitted, fitted_intercept = fit_logistic(x, y)
    # The threshold is chosen on the probabilities the stored (rounded) coefficients give, and
    # rounded down itself: otherwise the last answerable row it lets through can fall just short.
    coefficients = np.round(fitted, 4)
    intercept = round(fitted_intercept, 4)
    probabilities = _probabilities(x, coefficients, intercept)
    threshold = math.floor(choose_threshold(probabilities, y, min_coverage) * 1e4) / 1e4
    answered = probabilities >= threshold
    tenants = np.array([o.golden.tenant for o in rows])
    return {
        "embedding_model": model_id,
        "coefficients": {n: float(c) for n, c in zip(FEATURES, coefficients, strict=True)},
        "intercept": intercept,
        "threshold": threshold,
        "fitted_on": {
            "files": sources,
            "answerable": int(y.sum()),
            "abstain": int((1 - y).sum()),
            **_figures(answered, y),
        },
        "leave_one_tenant_out": leave_one_tenant_out(x, y, tenants, min_coverage),
    }


def leave_one_tenant_out(
    x: np.ndarray, y: np.ndarray, tenants: np.ndarray, min_coverage: float
) -> dict[str, dict[str, float]]:
    """Each tenant's figures under a gate fitted (threshold included) on the other tenants
    alone: how the gate does on a collection it never saw, as on the hidden release set."""
    held_out = {}
    for tenant in sorted(set(tenants.tolist())):
        fit, test = tenants != tenant, tenants == tenant
        coefficients, intercept = fit_logistic(x[fit], y[fit])
        threshold = choose_threshold(
            _probabilities(x[fit], coefficients, intercept), y[fit], min_coverage
        )
        answered = _probabilities(x[test], coefficients, intercept) >= threshold
        held_out[str(tenant)] = _figures(answered, y[test])
    return held_out


def _probabilities(x: np.ndarray, coefficients: np.ndarray, intercept: float) -> np.ndarray:
    return np.asarray(1.0 / (1.0 + np.exp(-(x @ coefficients + intercept))))


def _figures(answered: np.ndarray, y: np.ndarray) -> dict[str, float]:
    """Answer coverage of the answerable rows and abstain accuracy of the others (1.0 when a
    tenant has none of the kind)."""
    coverage = answered[y == 1].mean() if (y == 1).any() else 1.0
    abstained = (~answered[y == 0]).mean() if (y == 0).any() else 1.0
    return {"coverage": round(float(coverage), 4), "abstain_accuracy": round(float(abstained), 4)}


async def _main(args: argparse.Namespace) -> int:
    questions = [q for path in args.golden for q in load_golden(path)]
    async with open_runtime(Settings()) as runtime:
        observations = await observe(runtime.service, questions)
        model_id = runtime.service.embedder.model_id
    sources = [str(p) for p in args.golden]
    if args.ranking:
        cases = [
            ranking_case(o.golden, o.candidates, o.retrieval.hints, o.query)
            for o in observations
            if o.answerable
        ]
        ranking = rank_model(cases, model_id, sources)
        args.rank_output.write_text(json.dumps(ranking, indent=2) + "\n", encoding="utf-8")
        print(json.dumps(ranking, indent=2))
        model = RankModel.load(args.rank_output)
        observations = [o.reranked(model) for o in observations]
    fitted = gate_model(observations, model_id, args.min_coverage, sources)
    args.output.write_text(json.dumps(fitted, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(fitted, indent=2))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m rag.gate_fit", description=__doc__)
    parser.add_argument("golden", type=Path, nargs="+", help="dev golden files (JSONL)")
    parser.add_argument("--output", type=Path, default=Path("rag/gate/gate_model.json"))
    # 97.5 % of round 8's 241 answerable dev rows lets six abstain, as 97 % of the 229 before it
    # did; at 97 % a seventh may, and the threshold rises past answers the demo set expects.
    parser.add_argument("--min-coverage", type=float, default=0.975)
    parser.add_argument("--ranking", action="store_true", help="refit the ranker first")
    parser.add_argument("--rank-output", type=Path, default=Path("rag/retrieval/rank_model.json"))
    return asyncio.run(_main(parser.parse_args(argv)))


if __name__ == "__main__":
    sys.exit(main())
