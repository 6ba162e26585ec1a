"""Fit the gap report's two thresholds on the public dev set; prints JSON, ``--write`` keeps them.

    RUNBOOK_DATA_DIR=/tmp/gap-fit python -m bench.gap_fit [--write]

Both are measured on what the bot itself computes: each dev question (``evals/public/dev.jsonl``
and ``alerts-dev.jsonl``, never the test or holdout files) goes through ``RagService.retrieve``,
which yields the question's embedding (alert posts embedded by name and summary, as asked) and,
for the three collections ingested here, its evidence.

- ``cluster_similarity``: average-linkage clustering (``bot.core.gaps.clusters``) of all
  answerable dev questions together (five tenants: questions from another stack must never
  join) should put two questions in one group when they are on one subject: the folder of the
  runbook they expect (``kubernetes/``, ``cluster-monitoring-operator/``), or that runbook when
  it has no folder. Per runbook the dev set is too thin to fit on (182 questions over 138
  runbooks, written as different facets); that score is reported beside. Scored by pairwise
  F0.5, precision weighted over recall, because a reader must be able to trust that a group is
  one subject more than that every pair was found. F0.5 is flat over a wide range (one model,
  questions of one stack per tenant), so its argmax alone is noise: kept is the highest
  threshold whose F0.5 is within ``PLATEAU`` of the best, the most precise of the near-best.
- ``nearest_similarity``: a runbook is shown as "nearest" to a gap when its best chunk's cosine
  clears this. Positives: answerable questions, cosine of their expected runbook's best chunk;
  negatives: questions that must abstain (uncovered topic, another stack, no runbook), cosine of
  their best chunk. The threshold with the best balanced accuracy is kept.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from itertools import combinations
from pathlib import Path
from typing import Any

import numpy as np

from bot.core.gaps.clusters import cluster
from bot.core.gaps.thresholds import THRESHOLDS_FILE
from rag import GoldenQuestion, Settings, load_golden, open_runtime

EVALS = Path(__file__).resolve().parents[1] / "evals"
# The collections small enough to ingest in a minute (the nearest-runbook fit needs evidence);
# the clustering fit reads every tenant's dev questions, ingested or not.
TENANT_ROOTS = {
    "prom": Path("collections/prometheus-operator/content/runbooks"),
    "etcd": Path("collections/etcd/docs"),
    "istio": Path("collections/istio/docs"),
}
DEV_FILES = ("public/dev.jsonl", "public/alerts-dev.jsonl")
GRID = [round(0.2 + 0.01 * i, 2) for i in range(71)]  # 0.20 … 0.90
PLATEAU = 0.9  # share of the best F0.5 a threshold must reach to be "near-best"


@dataclass(frozen=True)
class Measured:
    tenant: str
    expected: str | None  # the first expected runbook; None when the question must abstain
    embedding: list[float]
    expected_cosine: float | None  # best chunk of the expected runbook among the evidence
    best_cosine: float
    ingested: bool


async def measure(settings: Settings) -> list[Measured]:
    questions = [q for name in DEV_FILES for q in load_golden(EVALS / name)]
    measured: list[Measured] = []
    async with open_runtime(settings) as runtime:
        for tenant, root in TENANT_ROOTS.items():
            await runtime.ingest(EVALS / root, tenant=tenant, prune=False, progress=False)
        for golden in questions:
            retrieval = await runtime.service.retrieve(
                golden.tenant, runtime.service.check_question(golden.question)
            )
            assert retrieval.embedding is not None
            evidence = retrieval.candidates.evidence
            expected = _expected(golden)
            cosines = [e.cosine for e in evidence if e.document_id == expected]
            measured.append(
                Measured(
                    tenant=golden.tenant,
                    expected=expected,
                    embedding=[float(x) for x in retrieval.embedding],
                    expected_cosine=max(cosines) if cosines else None,
                    best_cosine=max((e.cosine for e in evidence), default=0.0),
                    ingested=golden.tenant in TENANT_ROOTS,
                )
            )
    return measured


def fit_cluster_threshold(measured: list[Measured]) -> dict[str, Any]:
    rows = [m for m in measured if m.expected is not None]
    by_subject = [(m.tenant, _subject(m.expected or "")) for m in rows]
    by_runbook = [(m.tenant, m.expected) for m in rows]
    scored = [(_pairwise(rows, by_subject, t), t) for t in GRID]
    best = max(score[0] for score, _ in scored)
    (f_half, precision, recall), threshold = max(
        ((score, t) for score, t in scored if score[0] >= PLATEAU * best), key=lambda st: st[1]
    )
    runbook_f, runbook_precision, runbook_recall = _pairwise(rows, by_runbook, threshold)
    return {
        "threshold": threshold,
        "pairwise_f0_5": round(f_half, 3),
        "pairwise_precision": round(precision, 3),
        "pairwise_recall": round(recall, 3),
        "best_f0_5": round(best, 3),
        "best_f0_5_threshold": max(scored)[1],
        "questions": len(rows),
        "subjects": len(set(by_subject)),
        "same_subject_pairs": _same_pairs(by_subject),
        "per_runbook_at_threshold": {
            "pairwise_f0_5": round(runbook_f, 3),
            "pairwise_precision": round(runbook_precision, 3),
            "pairwise_recall": round(runbook_recall, 3),
            "runbooks": len(set(by_runbook)),
            "same_runbook_pairs": _same_pairs(by_runbook),
        },
    }


def _pairwise(
    rows: list[Measured], truth: Sequence[tuple[str, str | None]], threshold: float
) -> tuple[float, float, float]:
    """F0.5, precision and recall of "same group" against "same truth" over all pairs."""
    groups = cluster([r.embedding for r in rows], threshold)
    label = {i: g for g, members in enumerate(groups) for i in members}
    tp = fp = fn = 0
    for a, b in combinations(range(len(rows)), 2):
        same_truth, same_group = truth[a] == truth[b], label[a] == label[b]
        tp += same_truth and same_group
        fp += same_group and not same_truth
        fn += same_truth and not same_group
    precision = tp / (tp + fp) if tp + fp else 1.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    f_half = 1.25 * precision * recall / (0.25 * precision + recall) if recall else 0.0
    return f_half, precision, recall


def _same_pairs(truth: Sequence[tuple[str, str | None]]) -> int:
    return sum(truth[a] == truth[b] for a, b in combinations(range(len(truth)), 2))


def _subject(document: str) -> str:
    return document.rsplit("/", 1)[0] if "/" in document else document


def fit_nearest_threshold(measured: list[Measured]) -> dict[str, Any]:
    positives = [m.expected_cosine for m in measured if m.expected_cosine is not None]
    negatives = [m.best_cosine for m in measured if m.ingested and m.expected is None]
    scores = []
    for threshold in GRID:
        tpr = _share(c >= threshold for c in positives)
        tnr = _share(c < threshold for c in negatives)
        scores.append(((tpr + tnr) / 2, tpr, tnr, threshold))
    balanced, tpr, tnr, threshold = max(scores)
    return {
        "threshold": threshold,
        "balanced_accuracy": round(balanced, 3),
        "covered_shown": round(tpr, 3),
        "uncovered_hidden": round(tnr, 3),
        "positives": len(positives),
        "negatives": len(negatives),
        "positive_median": round(float(np.median(positives)), 3) if positives else None,
        "negative_median": round(float(np.median(negatives)), 3) if negatives else None,
    }


def _expected(golden: GoldenQuestion) -> str | None:
    targets = golden.targets()
    return targets[0].document if targets else None


def _share(flags: Iterable[bool]) -> float:
    values = list(flags)
    return sum(values) / len(values) if values else 0.0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.gap_fit", description=__doc__)
    parser.add_argument("--write", action="store_true", help=f"write {THRESHOLDS_FILE.name}")
    parser.add_argument(
        "--measured", type=Path, help="keep the measurements here; reuse them if it exists"
    )
    args = parser.parse_args(argv)
    settings = Settings()
    if args.measured is not None and args.measured.exists():
        rows = json.loads(args.measured.read_text(encoding="utf-8"))
        measured = [Measured(**row) for row in rows]
    else:
        measured = asyncio.run(measure(settings))
        if args.measured is not None:
            rows = [asdict(m) for m in measured]
            args.measured.write_text(json.dumps(rows), encoding="utf-8")
    result = {
        "embedding_model": settings.embedding_model,
        "dev_files": list(DEV_FILES),
        "ingested_tenants": sorted(TENANT_ROOTS),
        "cluster_similarity": fit_cluster_threshold(measured),
        "nearest_similarity": fit_nearest_threshold(measured),
    }
    if args.write:
        THRESHOLDS_FILE.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
