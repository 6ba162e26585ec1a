"""The full public evaluation in one command: ingest the six public collections, score a split.

    RUNBOOK_DATA_DIR=/tmp/public-eval python -m rag.eval_public --split dev [--answers] [--json]

Each collection under ``evals/collections`` becomes its tenant (ingestion is incremental, so a
second run only embeds what changed; tenants that ingest reports over the partition threshold
are moved to partitions of their own, as ``runbook db rebalance`` would), then every golden
file of the split runs through ``rag.evaluation.evaluate``: ``evals/public/{split}.jsonl``
(questions), ``alerts-{split}.jsonl`` (alert posts), ``mtrag-{split}.jsonl`` (MT-RAG IBM Cloud)
and ``oncall-{split}.jsonl`` (questions typed under pressure, issue 38), each reported on its
own; ``--sets`` narrows them (``--sets oncall``). Tune on
``dev``; ``test`` is for the reported figures only. ``--split holdout`` runs ``evals/holdout``
instead, over two collections nothing was tuned on (Rook, Cortex): report-only, see
``evals/holdout/README.md``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from rag.evaluation.evaluate import evaluate, load_golden
from rag.runtime import open_runtime
from rag.settings import Settings
from rag.store.partitions import rebalance

EVALS = Path(__file__).resolve().parents[2] / "evals"
# Tenant id -> the folder ingested for it (the same map as evals/check_labels.py).
TENANT_ROOTS = {
    "prom": Path("collections/prometheus-operator/content/runbooks"),
    "openshift": Path("collections/openshift/alerts"),
    "gitlab": Path("collections/gitlab"),
    "ibmcloud": Path("collections/mt-rag-cloud/corpus"),
    "etcd": Path("collections/etcd/docs"),
    "istio": Path("collections/istio/docs"),
}
HOLDOUT_ROOTS = {
    "rook": Path("collections/rook/docs"),
    "cortex": Path("collections/cortex/docs"),
}
SETS = ("{split}", "alerts-{split}", "mtrag-{split}", "oncall-{split}")
# The kind of question each file of a split holds (``--sets``).
_KINDS = {
    "{split}": "questions",
    "alerts-{split}": "alerts",
    "mtrag-{split}": "mtrag",
    "oncall-{split}": "oncall",
}
HOLDOUT_SETS = (Path("holdout/questions.jsonl"), Path("holdout/alerts.jsonl"))
_SHOWN = (
    "recall_at_k",
    "mrr",
    "document_recall_at_k",
    "abstain_accuracy",
    "answer_coverage",
    "abstain_precision",
    "abstain_recall",
    "first_citation_in_gold_document",
    "citation_in_gold_section",
    "gold_section_in_card",
    "n_answerable",
    "n_abstain",
)


async def run(
    split: str,
    *,
    answers: bool,
    evals: Path = EVALS,
    tenants: frozenset[str] | None = None,
    sets: frozenset[str] | None = None,
) -> dict[str, Any]:
    """Ingest and score; ``tenants`` narrows both to those collections, ``sets`` the question
    files to those kinds (``questions``, ``alerts``, ``mtrag``, ``oncall``): quicker comparisons."""
    settings = Settings()
    reports: dict[str, Any] = {}
    holdout = split == "holdout"
    roots = HOLDOUT_ROOTS if holdout else TENANT_ROOTS
    if tenants is not None:
        roots = {tenant: root for tenant, root in roots.items() if tenant in tenants}
    paths = (
        [evals / path for path in HOLDOUT_SETS]
        if holdout
        else [
            evals / "public" / (pattern.format(split=split) + ".jsonl")
            for pattern in SETS
            if sets is None or _KINDS[pattern] in sets
        ]
    )
    async with open_runtime(settings) as runtime:
        due: list[str] = []
        for tenant, root in roots.items():
            ingested = await runtime.ingest(
                evals / root, tenant=tenant, prune=False, progress=False
            )
            due.extend(ingested.rebalance_due)
        if due:
            # As an operator would after ingest says so: latency is measured on the layout
            # production runs (a tenant over the threshold in a partition of its own).
            await rebalance(
                runtime.store,
                min_chunks=settings.partition_min_chunks,
                exact_search_max_chunks=settings.exact_search_max_chunks,
                tenants=due,
            )
        for path in paths:
            golden = [q for q in load_golden(path) if q.tenant in roots] if path.exists() else []
            if golden:
                report = await evaluate(runtime.service, golden, k=5, answers=answers)
                reports[path.name] = report
    return reports


def _table(reports: dict[str, Any]) -> str:
    rows = ["| set | " + " | ".join(_SHOWN) + " | retrieval p95 ms |"]
    rows.append("|---" * (len(_SHOWN) + 2) + "|")
    for name, report in reports.items():
        cells = [str(report.get(key, "")) for key in _SHOWN]
        rows.append(f"| {name} | " + " | ".join(cells) + f" | {report['retrieval_ms']['p95']} |")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m rag.eval_public", description=__doc__)
    parser.add_argument(
        "--split",
        default="dev",
        help="dev or test (evals/public/*.jsonl), or holdout (evals/holdout, report-only)",
    )
    parser.add_argument("--answers", action="store_true", help="also score the answers")
    parser.add_argument("--json", action="store_true", help="print the full reports as JSON")
    parser.add_argument(
        "--sets",
        help="only these question files (comma-separated: questions, alerts, mtrag, oncall)",
    )
    parser.add_argument(
        "--tenants", help="only these collections and their questions (comma-separated tenants)"
    )
    args = parser.parse_args(argv)
    chosen = frozenset(args.tenants.split(",")) if args.tenants else None
    kinds = frozenset(args.sets.split(",")) if args.sets else None
    if kinds is not None and not kinds <= set(_KINDS.values()):
        parser.error(f"--sets takes {', '.join(_KINDS.values())}")
    reports = asyncio.run(run(args.split, answers=args.answers, tenants=chosen, sets=kinds))
    print(json.dumps(reports) if args.json else _table(reports))
    return 0


if __name__ == "__main__":
    sys.exit(main())
