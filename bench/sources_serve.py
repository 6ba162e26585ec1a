"""Peak RSS of ``runbook serve`` while it syncs a 500-page Confluence space on its own schedule.

``python -m bench.sources_serve [--pages 500] [--port 31257] [--serve-port 31258]`` (its health
endpoint on the next port): starts the shared fake Confluence, fills its OPS space (as
``bench.sources_confluence`` does), adds it as a source of a throwaway tenant with ``runbook
source add``, then starts ``runbook serve`` (Teams in its local, loopback-only mode: no chat
service needed), which queues the source's first sync at start. The server's peak RSS is the
kernel's high-water mark (``VmHWM``), read once the source list shows the sync's outcome.
Prints one JSON object and writes ``sources-serve.json``. Use a ``RUNBOOK_DATA_DIR`` of its own:
a server on a shared store would sync every other source too.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import aiohttp
from cryptography.fernet import Fernet

from bench.results_file import write_result
from bench.sources_confluence import EMAIL, TOKEN, fill_space, running_fake

SYNC_TIMEOUT_S = 1800.0


def _runbook(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bot", *args], env=env, capture_output=True, text=True, check=True
    )


def _rss_kb(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1])
    raise LookupError(field)


def _synced(tenant: str, env: dict[str, str]) -> dict[str, Any] | None:
    listed = json.loads(_runbook("source", "list", "--tenant", tenant, "--json", env=env).stdout)
    row: dict[str, Any] = listed["sources"][0]
    return row if row["last_outcome"] is not None else None


def measure(site: str, *, pages: int, serve_port: int) -> dict[str, Any]:
    asyncio.run(_fill_space(site, pages))  # before serve starts: its first sync sees them all
    tenant = f"bench-{uuid.uuid4().hex[:8]}"
    env = {
        **os.environ,
        "RUNBOOK_ENCRYPTION_KEYS": os.environ.get(
            "RUNBOOK_ENCRYPTION_KEYS", Fernet.generate_key().decode()
        ),
        "BENCH_CONFLUENCE_TOKEN": TOKEN,
        "TEAMS_APP_ID": "00000000-0000-0000-0000-00000000b001",
        "TEAMS_ALLOW_UNAUTHENTICATED": "1",
        "RUNBOOK_INTERNAL_PORT": str(serve_port + 1),
        # Servers before the sync deadline setting gave a sync the answers' 5 minutes: a first
        # sync on a busy machine outlasts that (nothing published) and this would wait forever.
        "RUNBOOK_JOB_DEADLINE_S": os.environ.get("RUNBOOK_JOB_DEADLINE_S", "3600"),
        "RUNBOOK_SOURCE_SYNC_DEADLINE_S": os.environ.get("RUNBOOK_SOURCE_SYNC_DEADLINE_S", "3600"),
        # One schedule slot a day: the first sync is the only one, and its report is the one read.
        "RUNBOOK_SOURCE_SYNC_INTERVAL_MIN": "1440",
        # The fake Confluence is on 127.0.0.1: the operator's allowance for a private network.
        "RUNBOOK_SOURCE_ALLOW_PRIVATE_NETWORKS": "true",
    }
    _runbook(
        *("source", "add", tenant, "confluence", f"{site}/wiki", "--space", "OPS"),
        *("--email", EMAIL, "--token-env", "BENCH_CONFLUENCE_TOKEN", "--name", "ops"),
        env=env,
    )
    serve = subprocess.Popen(
        [sys.executable, "-m", "bot", "serve", "--host", "127.0.0.1", "--port", str(serve_port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    started = time.monotonic()
    try:
        row = None
        while row is None and time.monotonic() - started < SYNC_TIMEOUT_S:
            time.sleep(2)
            row = _synced(tenant, env)
        peak_kb, after_kb = _rss_kb(serve.pid, "VmHWM"), _rss_kb(serve.pid, "VmRSS")
    finally:
        serve.terminate()
        serve.wait(timeout=60)
        _runbook("source", "remove", tenant, "ops", "--prune", env=env)
    if row is None:
        raise TimeoutError(f"the source did not sync within {SYNC_TIMEOUT_S:.0f} s")
    return {
        "benchmark": "sources-serve",
        "pages": pages,
        "sync_seconds": row["report"]["seconds"],
        "documents": row["report"]["documents"],
        "serve_peak_rss_mb": round(peak_kb / 1024, 1),
        "serve_rss_mb_after_sync": round(after_kb / 1024, 1),
    }


async def _fill_space(site: str, pages: int) -> None:
    async with aiohttp.ClientSession() as session:
        await fill_space(session, site, pages, random.Random(7))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=500)
    parser.add_argument("--port", type=int, default=31257)
    parser.add_argument("--serve-port", type=int, default=31258)
    parser.add_argument("--output", type=Path, default=Path("bench/results"))
    args = parser.parse_args()
    with running_fake(args.port) as site:
        result = measure(site, pages=args.pages, serve_port=args.serve_port)
    print(write_result(args.output, "sources-serve", result))


if __name__ == "__main__":
    main()
