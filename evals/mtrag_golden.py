"""Build the ``ibmcloud`` golden questions from MT-RAG's own tasks and labels.

Two sources, both from the benchmark (``collections/mt-rag-cloud/source``):

- MTRAG retrieval tasks (``mtrag-human/retrieval_tasks/cloud``): the benchmark's standalone
  rewrite of each turn, labelled with its qrels. A task is kept when at least one relevant passage
  is in the available corpus; the label lists only those passages (``any_of`` when several).
- MTRAG-UN reference tasks (``mtragun-human/cloud_reference_tasks.jsonl``): their last turns
  lean on the conversation ("how can I create one?"), so ``sources/mtrag-rewrites.jsonl`` holds
  our standalone wording of selected turns. The label still comes from the benchmark:
  ``ANSWERABLE`` -> the task's reference passages, ``UNANSWERABLE`` -> ``"abstain"``.

Writes ``sources/mtrag.jsonl``; deterministic. ``python evals/mtrag_golden.py``
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

EVALS = Path(__file__).resolve().parent
SOURCE = EVALS / "collections/mt-rag-cloud/source"
RETRIEVAL = SOURCE / "mtrag-human/retrieval_tasks/cloud"
REWRITES = EVALS / "sources/mtrag-rewrites.jsonl"
OUT = EVALS / "sources/mtrag.jsonl"
TENANT = "ibmcloud"


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def expect_for(passages: list[str]) -> dict[str, Any]:
    targets = [{"document": p} for p in dict.fromkeys(passages)]
    return targets[0] if len(targets) == 1 else {"any_of": targets}


def row_id(prefix: str, task_id: str) -> str:
    conversation, turn = task_id.split("<::>")
    return f"{prefix}-{conversation[:8]}-{turn}"


def retrieval_rows(available: set[str]) -> list[dict[str, Any]]:
    relevant: dict[str, list[str]] = defaultdict(list)
    qrels = (RETRIEVAL / "qrels/dev.tsv").read_text(encoding="utf-8").splitlines()[1:]
    for line in qrels:
        query, passage, _score = line.split("\t")
        relevant[query].append(passage)
    rows = []
    for task in read_jsonl(RETRIEVAL / "cloud_rewrite.jsonl"):
        present = [p for p in relevant[task["_id"]] if p in available]
        if not present:
            continue
        rows.append(
            {
                "id": row_id("ibm-r", task["_id"]),
                "tenant": TENANT,
                "question": task["text"].removeprefix("|user|:").strip(),
                "expect": expect_for(present),
                "kind": "mtrag",
                "type": "answerable"
                if len(present) == len(relevant[task["_id"]])
                else "partial_qrels",
                "source": task["_id"],
            }
        )
    return rows


def rewritten_rows(available: set[str]) -> list[dict[str, Any]]:
    tasks = {
        t["task_id"]: t for t in read_jsonl(SOURCE / "mtragun-human/cloud_reference_tasks.jsonl")
    }
    rows = []
    for rewrite in read_jsonl(REWRITES):
        task = tasks[rewrite["source"]]
        label = task["answerability"]
        if label == ["UNANSWERABLE"]:
            expect: Any = "abstain"
        elif label == ["ANSWERABLE"]:
            passages = [c["document_id"] for c in task["contexts"]]
            missing = [p for p in passages if p not in available]
            if missing or not passages:
                raise SystemExit(f"{rewrite['source']}: reference passages missing: {missing}")
            expect = expect_for(passages)
        else:
            raise SystemExit(f"{rewrite['source']}: answerability {label} is neither kind we use")
        rows.append(
            {
                "id": row_id("ibm-u", rewrite["source"]),
                "tenant": TENANT,
                "question": rewrite["question"],
                "expect": expect,
                "kind": "mtrag",
                "type": "abstain" if expect == "abstain" else "answerable",
                "source": rewrite["source"],
            }
        )
    return rows


def main() -> None:
    available = {row["_id"] for row in read_jsonl(SOURCE / "cloud_passages_available.jsonl")}
    rows = retrieval_rows(available) + rewritten_rows(available)
    OUT.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    print(f"wrote {len(rows)} rows to {OUT.relative_to(EVALS.parent)}")


if __name__ == "__main__":
    main()
