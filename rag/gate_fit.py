"""Fit the answerability gate (and check the ranking weights) on a dev golden set.

    RUNBOOK_DATA_DIR=... python -m rag.gate_fit evals/public/dev.jsonl [...] \
        --output rag/gate_model.json [--ranking]

The tenants named in the files must be ingested in that database (README, "Evaluation"). Every
question goes through retrieval once; the gate's features are recorded with the label
"answerable" (the golden row expects a section) or not ("abstain"), and a logistic regression
with a small L2 penalty is fitted by Newton's method. The threshold stored with it is the
smallest probability that keeps answer coverage at or above ``--min-coverage`` on the fitting
data while abstaining as often as possible on the unanswerable rows. ``--ranking`` also scores a
grid of fusion weights (``rag.rank.RankWeights``, by coordinate ascent) by MRR@5 and prints
the best, for a person to
copy into ``rag/rank.py``: ranking constants are code, reviewed like code.

Use the dev split only; the test split is for the README's figures.
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

from rag.alerts import parse_alert
from rag.evaluate import GoldenQuestion, load_golden
from rag.gate import FEATURES
from rag.rank import DEFAULT_WEIGHTS, RankWeights, fuse
from rag.runtime import open_runtime
from rag.service import RagService, Retrieval
from rag.settings import Settings

_L2 = 0.1
_GRID = {
    "keyword": (0.7, 1.0, 1.4),
    "exact_name": (1.0, 3.0),
    "loose_name": (0.0, 1.0),
    "intent": (0.0, 0.5, 1.0, 1.5),
    "document": (0.0, 0.3, 0.6),
    "mitigation": (0.0, 0.5, 1.0),
    "diagnosis": (0.0, 0.3, 0.6),
    "impact": (-0.6, -0.3, 0.0),
}


@dataclass
class Observation:
    golden: GoldenQuestion
    retrieval: Retrieval
    query: str

    @property
    def answerable(self) -> bool:
        return self.golden.expect != "abstain"


def fit_logistic(x: np.ndarray, y: np.ndarray, l2: float = _L2) -> tuple[np.ndarray, float]:
    """Weights and intercept of an L2-penalised logistic regression (intercept unpenalised)."""
    design = np.hstack([x, np.ones((x.shape[0], 1))])
    weights = np.zeros(design.shape[1])
    penalty = np.full(design.shape[1], l2)
    penalty[-1] = 0.0
    for _ in range(100):
        p = 1.0 / (1.0 + np.exp(-np.clip(design @ weights, -30, 30)))
        gradient = design.T @ (p - y) + penalty * weights
        hessian = design.T @ (design * (p * (1 - p))[:, None]) + np.diag(penalty + 1e-9)
        step = np.linalg.solve(hessian, gradient)
        weights -= step
        if float(np.max(np.abs(step))) < 1e-8:
            break
    return weights[:-1], float(weights[-1])


def choose_threshold(probabilities: np.ndarray, y: np.ndarray, min_coverage: float) -> float:
    """The highest threshold whose answer coverage on answerable rows is still ``min_coverage``."""
    answerable = np.sort(probabilities[y == 1])
    if answerable.size == 0:
        return 0.5
    allowed_misses = math.floor((1 - min_coverage) * answerable.size)
    # Just below the answerable probability that must still pass.
    return float(max(answerable[allowed_misses] - 1e-6, 0.0))


def mrr(observations: list[Observation], weights: RankWeights, k: int = 5) -> float:
    total = 0.0
    answerable = [o for o in observations if o.answerable]
    for item in answerable:
        ranked = fuse(
            list(item.retrieval.candidates.evidence), item.retrieval.hints, item.query, weights
        )
        targets = item.golden.targets()
        for rank, evidence in enumerate(ranked[:k], start=1):
            if any(t.matches(evidence) for t in targets):
                total += 1.0 / rank
                break
    return total / max(len(answerable), 1)


def best_ranking(observations: list[Observation], rounds: int = 2) -> tuple[RankWeights, float]:
    """Coordinate ascent over ``_GRID``: each weight in turn takes its best value, twice over."""
    best = (DEFAULT_WEIGHTS, mrr(observations, DEFAULT_WEIGHTS))
    for _ in range(rounds):
        for name, values in _GRID.items():
            for value in values:
                weights = replace(best[0], **{name: value})
                score = mrr(observations, weights)
                if score > best[1] + 1e-9:
                    best = (weights, score)
    return best


async def observe(service: RagService, questions: list[GoldenQuestion]) -> list[Observation]:
    found = []
    for golden in questions:
        question = service.check_question(golden.question)
        retrieval = await service.retrieve(golden.tenant, question, service=golden.service)
        alert = parse_alert(question)
        found.append(Observation(golden, retrieval, alert.search_text() if alert else question))
    return found


def gate_model(
    observations: list[Observation], model_id: str, min_coverage: float, sources: list[str]
) -> dict[str, Any]:
    rows = [o for o in observations if o.retrieval.gate.features]
    x = np.array([[dict(o.retrieval.gate.features)[n] for n in FEATURES] for o in rows])
    y = np.array([1.0 if o.answerable else 0.0 for o in rows])
    coefficients, intercept = fit_logistic(x, y)
    probabilities = 1.0 / (1.0 + np.exp(-(x @ coefficients + intercept)))
    threshold = choose_threshold(probabilities, y, min_coverage)
    answered = probabilities >= threshold
    return {
        "embedding_model": model_id,
        "coefficients": {
            n: round(float(c), 4) for n, c in zip(FEATURES, coefficients, strict=True)
        },
        "intercept": round(intercept, 4),
        "threshold": round(threshold, 4),
        "fitted_on": {
            "files": sources,
            "answerable": int(y.sum()),
            "abstain": int((1 - y).sum()),
            "coverage": round(float(answered[y == 1].mean()), 4),
            "abstain_accuracy": round(float((~answered[y == 0]).mean()), 4),
        },
    }


async def _main(args: argparse.Namespace) -> int:
    questions = [q for path in args.golden for q in load_golden(path)]
    async with open_runtime(Settings()) as runtime:
        observations = await observe(runtime.service, questions)
        model_id = runtime.service.embedder.model_id
    if args.ranking:
        weights, score = best_ranking(observations)
        print(f"MRR@5 default {mrr(observations, DEFAULT_WEIGHTS):.4f}; best {score:.4f}")
        print(f"best weights: {weights}")
    fitted = gate_model(observations, model_id, args.min_coverage, [str(p) for p in args.golden])
    args.output.write_text(json.dumps(fitted, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(fitted, indent=2))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m rag.gate_fit", description=__doc__)
    parser.add_argument("golden", type=Path, nargs="+", help="dev golden files (JSONL)")
    parser.add_argument("--output", type=Path, default=Path("rag/gate_model.json"))
    parser.add_argument("--min-coverage", type=float, default=0.97)
    parser.add_argument("--ranking", action="store_true", help="also search the fusion weights")
    return asyncio.run(_main(parser.parse_args(argv)))


if __name__ == "__main__":
    sys.exit(main())
