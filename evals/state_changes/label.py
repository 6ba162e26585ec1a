"""Label every extracted command changes-state / reads-only and write ``labels.jsonl``.

``python -m evals.state_changes.label`` re-extracts the commands, labels each by the
hand-written rules (``rules.py``) or, where no rule places it or a rule was found wrong on
reading, by the person-read label in ``overrides.jsonl`` (keyed by the command's text), and
rewrites ``labels.jsonl``. ``--check`` only says whether ``labels.jsonl`` is current and every
command has a label (exit 1 otherwise). Neither reads the detector under test.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from evals.state_changes.extract import extract
from evals.state_changes.rules import label_command

HERE = Path(__file__).resolve().parent
LABELS = HERE / "labels.jsonl"
OVERRIDES = HERE / "overrides.jsonl"
SQL_INFO = frozenset("sql psql pgsql postgresql postgres mysql".split())


def load_overrides() -> dict[str, dict[str, str]]:
    if not OVERRIDES.exists():
        return {}
    rows = (
        json.loads(line)
        for line in OVERRIDES.read_text(encoding="utf-8").splitlines()
        if line.strip()
    )
    return {row["command"]: row for row in rows}


def labelled_rows() -> list[dict[str, object]]:
    overrides = load_overrides()
    rows: list[dict[str, object]] = []
    for row in extract():
        command = str(row["command"])
        label, why = label_command(command, sql=row["info"] in SQL_INFO)
        by = "rule"
        if command in overrides:
            label, why, by = overrides[command]["label"], overrides[command]["why"], "read"
        rows.append({**row, "label": label, "by": by, "why": why})
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--check", action="store_true")
    parser.add_argument("--unlabelled", action="store_true", help="print rows no rule places")
    args = parser.parse_args(argv)
    rows = labelled_rows()
    text = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
    missing = [row for row in rows if row["label"] is None]
    if args.unlabelled:
        for row in missing:
            sys.stdout.write(json.dumps(row, ensure_ascii=False) + "\n")
        return 0
    if args.check:
        current = LABELS.exists() and LABELS.read_text(encoding="utf-8") == text
        print(json.dumps({"rows": len(rows), "unlabelled": len(missing), "current": current}))
        return 0 if current and not missing else 1
    LABELS.write_text(text, encoding="utf-8")
    counts: dict[str, int] = {}
    for row in rows:
        counts[str(row["label"])] = counts.get(str(row["label"]), 0) + 1
    print(json.dumps({"rows": len(rows), "labels": counts, "unlabelled": len(missing)}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
