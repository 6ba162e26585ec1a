"""How long the ``runbook`` command takes as a user meets it (issue 38: ``runbook --help`` in
≤ 0.5 s, ``runbook ask`` in ≤ 1.5 s end to end on a warm database).

    .venv/bin/python -m bench.cli_latency [--runs 5] [--tenant acme] [--question "…"]

Runs the console script as a child process, as a shell would, ``--runs`` times each: ``runbook
--help``, ``runbook ask --tenant T --no-record QUESTION`` (text) and ``--json``, after one
untimed ask that starts the embedded database (or reaches ``DATABASE_URL``) and warms the model
files — so "warm" means the database runs and the page cache holds the model, not that any
process stays up. Also the import time of ``bot.cli`` (``python -X importtime``) and the five
slowest third-party packages it imports. Ingest the demo corpus first (``runbook ingest
corpus``). Prints one JSON object (median and max wall seconds, ``/proc/loadavg`` before and
after) and writes ``cli-latency.json``.
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bench.alert_posts import loadavg
from bench.results_file import write_result

REPO = Path(__file__).resolve().parents[1]
RUNBOOK = [sys.executable, "-c", "import sys; from bot.cli import main; sys.exit(main())"]
_IMPORT_LINE = re.compile(r"import time:\s+\d+ \|\s+(\d+) \|( *)(\S+)")


def _timed(args: list[str]) -> float:
    started = time.perf_counter()
    done = subprocess.run([*RUNBOOK, *args], cwd=REPO, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"runbook {' '.join(args)} failed: {done.stderr.strip()[-400:]}")
    return elapsed


def _runs(args: list[str], runs: int) -> dict[str, float]:
    times = [_timed(args) for _ in range(runs)]
    return {"median_s": round(statistics.median(times), 3), "max_s": round(max(times), 3)}


def import_profile() -> dict[str, Any]:
    """``import bot.cli``: total seconds and the slowest third-party top-level packages."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", "import bot.cli"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    )
    packages: dict[str, int] = {}
    total = 0
    for line in done.stderr.splitlines():
        match = _IMPORT_LINE.match(line)
        if match is None:
            continue
        cumulative, name = int(match.group(1)), match.group(3)
        if name == "bot.cli":
            total = cumulative
        elif "." not in name and name not in ("rag", "bot", "bench"):
            packages[name] = max(packages.get(name, 0), cumulative)
    slowest = sorted(packages.items(), key=lambda item: -item[1])[:5]
    return {
        "import_bot_cli_s": round(total / 1e6, 3),
        "slowest_packages_s": {name: round(us / 1e6, 3) for name, us in slowest},
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--tenant", default="acme")
    parser.add_argument("--question", default="how do I fail over the payments database?")
    parser.add_argument("--output", type=Path, default=REPO / "bench" / "results")
    args = parser.parse_args(argv)
    ask = ["ask", "--tenant", args.tenant, "--no-record", args.question]
    before = loadavg()
    _timed(ask)  # starts the embedded server if it is not running, warms the page cache
    result = {
        "runs": args.runs,
        "help": _runs(["--help"], args.runs),
        "ask_text": _runs(ask, args.runs),
        "ask_json": _runs([*ask[:-1], "--json", args.question], args.runs),
        **import_profile(),
        "targets_s": {"help": 0.5, "ask": 1.5},
        "loadavg_before": before,
        "loadavg_after": loadavg(),
    }
    print(write_result(args.output, "cli-latency", result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
