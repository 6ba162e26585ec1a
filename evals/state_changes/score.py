"""Score the state-change detector (``rag.state_changes_in``) on the labelled commands.

``python -m evals.state_changes.score`` prints one JSON object: precision and recall of
"changes state" over every labelled command (``not-a-command`` rows are left out, and counted
apart as ``marked_non_commands``), the confusion counts, the same per collection, and with
``--misses`` every false alarm and miss with its source.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from rag import state_changes_in

LABELS = Path(__file__).resolve().parent / "labels.jsonl"
CHANGES, READS = "changes-state", "reads-only"


def _collection(source: str) -> str:
    parts = source.split("/")
    return parts[1] if parts[0] == "corpus" else parts[2]


def _ratios(counts: dict[str, int]) -> dict[str, float | int]:
    tp, fp, fn = counts["tp"], counts["fp"], counts["fn"]
    return {
        **counts,
        "precision": round(tp / (tp + fp), 4) if tp + fp else 1.0,
        "recall": round(tp / (tp + fn), 4) if tp + fn else 1.0,
    }


def score(path: Path = LABELS) -> dict[str, object]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    total = {"tp": 0, "fp": 0, "fn": 0, "tn": 0}
    per: dict[str, dict[str, int]] = {}
    misses: list[dict[str, object]] = []
    marked_non_commands = 0
    for row in rows:
        marked = bool(state_changes_in(row["command"]))
        if row["label"] not in (CHANGES, READS):
            marked_non_commands += marked
            continue
        truth = row["label"] == CHANGES
        cell = ("tp" if truth else "fp") if marked else ("fn" if truth else "tn")
        total[cell] += 1
        bucket = per.setdefault(_collection(row["source"]), {"tp": 0, "fp": 0, "fn": 0, "tn": 0})
        bucket[cell] += 1
        if cell in ("fp", "fn"):
            misses.append(
                {
                    "kind": "false alarm" if cell == "fp" else "miss",
                    "source": row["source"],
                    "line": row["line"],
                    "command": row["command"],
                    "why": row["why"],
                }
            )
    return {
        "rows": len(rows),
        "scored": sum(total.values()),
        **_ratios(total),
        "marked_non_commands": marked_non_commands,
        "per_collection": {name: _ratios(counts) for name, counts in sorted(per.items())},
        "misses": misses,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--misses", action="store_true", help="list false alarms and misses")
    args = parser.parse_args(argv)
    report = score()
    if not args.misses:
        report.pop("misses")
    print(json.dumps(report, indent=2, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
