"""Split the public question sets into dev and test, deterministically and stratified.

Rows are grouped by (tenant, kind, answerable or abstain); inside each group they are ordered by
the SHA-256 of their id and the first 55 % (rounded, at least one) go to dev, the rest to test.
So every group with two or more rows is in both splits, a row never moves between splits when
other rows are added to another group, and re-running gives the same files byte for byte. A row
added to a group can push an existing dev row of that group into test; see README ("Adding rows").

    sources/runbooks.jsonl  -> public/dev.jsonl, public/test.jsonl
    sources/alerts.jsonl    -> public/alerts-dev.jsonl, public/alerts-test.jsonl
    sources/mtrag.jsonl     -> public/mtrag-dev.jsonl, public/mtrag-test.jsonl
    sources/oncall.jsonl    -> public/oncall-dev.jsonl, public/oncall-test.jsonl

``python evals/split.py`` writes them; ``--check`` only fails (exit 1) if they are out of date.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

EVALS = Path(__file__).resolve().parent
DEV_SHARE = 0.55
SETS = {
    "runbooks": ("dev", "test"),
    "alerts": ("alerts-dev", "alerts-test"),
    "mtrag": ("mtrag-dev", "mtrag-test"),
    "oncall": ("oncall-dev", "oncall-test"),
}


def stratum(row: dict[str, Any]) -> tuple[str, str, bool]:
    return (row["tenant"], row.get("kind", "question"), row["expect"] == "abstain")


def split_rows(rows: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    groups: dict[tuple[str, str, bool], list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        groups[stratum(row)].append(row)
    dev_ids: set[str] = set()
    for members in groups.values():
        members.sort(key=lambda r: hashlib.sha256(r["id"].encode()).hexdigest())
        take = max(1, math.floor(DEV_SHARE * len(members) + 0.5))
        dev_ids.update(r["id"] for r in members[:take])
    # Output keeps the source order, so diffs of the split files read like diffs of the sources.
    return [r for r in rows if r["id"] in dev_ids], [r for r in rows if r["id"] not in dev_ids]


def render(rows: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="split the public eval sets into dev and test")
    parser.add_argument("--check", action="store_true", help="fail if the split files are stale")
    args = parser.parse_args(argv)
    out_dir = EVALS / "public"
    out_dir.mkdir(exist_ok=True)
    stale = []
    for source, names in SETS.items():
        text = (EVALS / "sources" / f"{source}.jsonl").read_text(encoding="utf-8")
        rows = [json.loads(line) for line in text.splitlines() if line.strip()]
        for name, part in zip(names, split_rows(rows), strict=True):
            path = out_dir / f"{name}.jsonl"
            wanted = render(part)
            if args.check:
                if not path.exists() or path.read_text(encoding="utf-8") != wanted:
                    stale.append(path.name)
            else:
                path.write_text(wanted, encoding="utf-8")
                print(f"{path.relative_to(EVALS.parent)}: {len(part)} rows")
    if stale:
        print(f"stale split files (run python evals/split.py): {', '.join(stale)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
