"""Ack latency and answers/s of ``runbook serve --role all`` under the Slack probe's load, alone
and beside a 500-page source sync: one command.

    .venv/bin/python -m bench.roles_load [--n 200] [--concurrency 20] [--sync-pages 500]

Prepares a store under ``--data-dir`` (corpus/ ingested once, ``T_ACME`` → acme), then runs the
black-box probe (``slack_probe.py --scenario load``, which starts and stops ``serve`` itself)
twice: once alone, and once after adding a git source of ``--sync-pages`` synthetic runbooks
(``file://``, a throwaway tenant), whose first sync the workers' schedule queues at start and
runs while the probe's mentions arrive. Each run records the probe's figures, the machine's
load average before and after, and (for the second) when the sync ran, so its overlap with the
load is on record. Writes ``bench/results/roles-load.json`` and stops the embedded server
(its data stays: a later run skips the ingest). Targets (issue 41, on a quiet
2-core machine): ack p99 ≤ 50 ms and ≥ 80 answers/s alone; ack p99 ≤ 100 ms beside the sync.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shlex
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

from bench.results_file import write_result

PROBE = Path("/work/shared/probes/slack_probe.py")
_SERVICES = ("payments", "checkout", "search", "auth", "kafka", "redis", "postgres", "cdn")
_GIT_ENV = {
    **{k: v for k, v in os.environ.items() if not k.startswith("GIT_")},
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@example.com",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@example.com",
}


def runbook(*args: str, env: dict[str, str]) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "bot", *args], env=env, check=True, capture_output=True, text=True
    )
    return done.stdout


def make_repo(root: Path, pages: int) -> None:
    """A git repository of ``pages`` synthetic runbooks, two sections each."""
    rng = random.Random(41)
    root.mkdir(parents=True)
    for n in range(pages):
        service = _SERVICES[n % len(_SERVICES)]
        path = root / "runbooks" / service / f"r{n}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        steps = "\n".join(
            f"{i}. Check {service} {rng.choice(('pods', 'queues', 'replicas'))} and restart "
            f"worker {rng.randrange(100)} if it is stuck."
            for i in range(1, 6)
        )
        path.write_text(
            f"# {service} incident {n}\n\n## Diagnosis\nLook at the {service} panel {n}.\n\n"
            f"## Mitigation\n{steps}\n",
            encoding="utf-8",
        )
    for args in (("init", "-q", "-b", "main"), ("add", "-A"), ("commit", "-q", "-m", "runbooks")):
        subprocess.run(["git", *args], cwd=root, env=_GIT_ENV, check=True, capture_output=True)


def probe_load(args: argparse.Namespace, env: dict[str, str]) -> dict[str, Any]:
    serve = f"{shlex.quote(sys.executable)} -m bot serve --role all --port {args.port}"
    command = [
        sys.executable,
        str(args.probe),
        "--scenario",
        "load",
        "--json",
        "--n",
        str(args.n),
        "--concurrency",
        str(args.concurrency),
        "--timeout",
        str(args.timeout),
        "--wait-app",
        "300",
        "--app-url",
        f"http://127.0.0.1:{args.port}/slack/events",
        "--app-cmd",
        serve,
    ]
    before = os.getloadavg()
    started = time.time()
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    summary = next(
        (json.loads(line) for line in reversed(done.stdout.splitlines()) if '"scenarios"' in line),
        None,
    )
    if summary is None:
        raise RuntimeError(f"the probe printed no summary:\n{done.stderr[-3000:]}")
    load = summary["scenarios"]["load"]
    return {
        "passed": load["passed"],
        "summary": load["summary"],
        "figures": load["figures"],
        "started_at": round(started, 1),
        "finished_at": round(time.time(), 1),
        "loadavg_before": [round(x, 2) for x in before],
        "loadavg_after": [round(x, 2) for x in os.getloadavg()],
    }


def sync_window(listed: dict[str, Any], load: dict[str, Any]) -> dict[str, Any]:
    """When the sync ran (from its report), and how much of the probe's run it covered."""
    from datetime import datetime

    source = listed["sources"][0]
    report = source.get("report") or {}
    if source.get("last_sync_at") is None or "seconds" not in report:
        # Not finished when the probe stopped serve (its drain hands the sync back): it ran
        # through the whole of the probe's load.
        return {"outcome": source.get("last_outcome"), "unfinished_when_serve_stopped": True}
    finished = datetime.fromisoformat(source["last_sync_at"]).timestamp()
    started = finished - float(report["seconds"])
    overlap = min(finished, load["finished_at"]) - max(started, load["started_at"])
    return {
        "outcome": source["last_outcome"],
        "documents": report.get("documents"),
        "seconds": report["seconds"],
        "started_at": round(started, 1),
        "finished_at": round(finished, 1),
        "overlap_with_probe_run_s": round(max(0.0, overlap), 1),
    }


def run(args: argparse.Namespace) -> dict[str, Any]:
    args.data_dir.mkdir(parents=True, exist_ok=True)
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("RUNBOOK_", "SLACK_"))},
        "RUNBOOK_DATA_DIR": str(args.data_dir),
        "RUNBOOK_INTERNAL_PORT": str(args.port + 1),
        "RUNBOOK_SOURCE_ALLOW_FILE": "true",
        "RUNBOOK_SOURCE_SYNC_INTERVAL_MIN": "1440",  # the first sync, at start, is the only one
        **dict(args.set),
    }
    if not (args.data_dir / "ingested").exists():
        runbook("ingest", str(args.corpus), env=env)
        runbook("workspace", "add", "T_ACME", "acme", env=env)
        (args.data_dir / "ingested").touch()
    try:
        return _measure(args, env)
    finally:
        if not args.keep_server:
            runbook("db", "stop", env=env)


def _measure(args: argparse.Namespace, env: dict[str, str]) -> dict[str, Any]:
    alone = probe_load(args, env)
    tenant = f"bench-roles-{uuid.uuid4().hex[:8]}"
    repo = args.data_dir.parent / f"{args.data_dir.name}-repo-{tenant}"
    make_repo(repo, args.sync_pages)
    runbook("source", "add", tenant, "git", repo.as_uri(), "--name", "roles", env=env)
    try:
        beside_sync = probe_load(args, env)
        listed = json.loads(runbook("source", "list", "--tenant", tenant, "--json", env=env))
    finally:
        runbook("source", "remove", tenant, "roles", "--prune", env=env)
    beside_sync["sync"] = {"pages": args.sync_pages, **sync_window(listed, beside_sync)}
    return {
        "benchmark": "roles-load",
        "command": " ".join(["python -m bench.roles_load", *map(shlex.quote, sys.argv[1:])]),
        "cpu_count": os.cpu_count(),
        "app": "runbook serve --role all (RUNBOOK_WORKERS unset: one worker per core)",
        "settings": dict(args.set),
        "targets": {
            "alone": "ack p99 <= 50 ms, >= 80 answers/s",
            "beside_sync": "ack p99 <= 100 ms",
        },
        "alone": alone,
        "beside_sync": beside_sync,
    }


def _setting(text: str) -> tuple[str, str]:
    name, equals, value = text.partition("=")
    if not equals or not name.startswith("RUNBOOK_"):
        raise argparse.ArgumentTypeError(f"expected RUNBOOK_NAME=VALUE, got {text!r}")
    return name, value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=200, help="mentions (the probe's default 200)")
    parser.add_argument("--concurrency", type=int, default=20)
    parser.add_argument("--sync-pages", type=int, default=500)
    parser.add_argument(
        "--timeout",
        type=float,
        default=60.0,
        help="seconds the probe waits for each answer before it counts it lost (its own "
        "default, 10, counts answers a busy machine delays as lost)",
    )
    parser.add_argument("--port", type=int, default=4713, help="public port; internal: +1, …")
    parser.add_argument("--probe", type=Path, default=PROBE)
    parser.add_argument("--corpus", type=Path, default=Path("corpus"))
    parser.add_argument("--data-dir", type=Path, default=Path("/tmp/roles-load"))
    parser.add_argument("--output", type=Path, default=Path("bench/results"))
    parser.add_argument("--name", default="roles-load")
    parser.add_argument(
        "--keep-server", action="store_true", help="leave the embedded Postgres running"
    )
    parser.add_argument(
        "--set",
        type=_setting,
        action="append",
        default=[],
        metavar="RUNBOOK_NAME=VALUE",
        help="a setting for serve (repeatable; the caller's RUNBOOK_ variables are not passed), "
        "e.g. RUNBOOK_WORKER_NICE=5 to compare against the default",
    )
    args = parser.parse_args()
    print(write_result(args.output, args.name, run(args)))


if __name__ == "__main__":
    main()
