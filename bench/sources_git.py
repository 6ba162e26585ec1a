"""A git source's first sync and an incremental sync, with time and peak memory.

``python -m bench.sources_git [--files 500] [--output bench/results]``: makes a local git
repository of synthetic runbooks, adds it as a source of a throwaway tenant (``bench-…``, its
documents retired afterwards), syncs it, then commits 5 changed files, 1 new and 1 deleted, and
syncs again. Prints one JSON object and writes it to ``sources-git.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import resource
import subprocess
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from bench.results_file import machine_facts, write_result
from rag import (
    GitReader,
    GitSourceSettings,
    Settings,
    SourceAccess,
    SyncReport,
    add_source,
    open_runtime,
    remove_source,
    sync_source,
)

_SERVICES = ("payments", "checkout", "search", "auth", "kafka", "redis", "postgres", "cdn")
_SYMPTOMS = ("5xx errors", "high latency", "consumer lag", "memory evictions", "disk pressure")
_ENV = {
    **{k: v for k, v in os.environ.items() if not k.startswith("GIT_")},
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@example.com",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@example.com",
}


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, env=_ENV, check=True, capture_output=True)


def _runbook(rng: random.Random, n: int, edit: int = 0) -> str:
    service, symptom = rng.choice(_SERVICES), rng.choice(_SYMPTOMS)
    steps = "\n".join(
        f"{i}. Check {service} {rng.choice(('pods', 'queues', 'replicas', 'dashboards'))} "
        f"for {symptom}; restart worker {rng.randrange(100)} if stuck (rev {edit})."
        for i in range(1, 6)
    )
    return (
        f"# {service} {symptom} {n}\n\n## Diagnosis\nLook at the {service} {symptom} panel.\n\n"
        f"## Mitigation\n{steps}\n"
    )


def _make_repo(root: Path, files: int, rng: random.Random) -> None:
    root.mkdir(parents=True)
    _git(root, "init", "-q", "-b", "main")
    for n in range(files):
        path = root / "runbooks" / _SERVICES[n % len(_SERVICES)] / f"r{n}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(_runbook(rng, n), encoding="utf-8")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "runbooks")


def _change_repo(root: Path, files: int, rng: random.Random) -> None:
    for n in range(5):
        path = root / "runbooks" / _SERVICES[n % len(_SERVICES)] / f"r{n}.md"
        path.write_text(_runbook(rng, n, edit=1), encoding="utf-8")
    (root / "runbooks" / "new.md").write_text(_runbook(rng, files), encoding="utf-8")
    _git(root, "rm", "-q", f"runbooks/{_SERVICES[7 % len(_SERVICES)]}/r7.md")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "changes")


async def _measured(run: Any) -> tuple[SyncReport, dict[str, float]]:
    """The sync's wall time, and the process's peak RSS after it (the model included)."""
    started = time.perf_counter()
    report: SyncReport = await run()
    seconds = time.perf_counter() - started
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return report, {"seconds": round(seconds, 3), "peak_rss_mb": round(peak_mb, 1)}


async def run_benchmark(settings: Settings, *, files: int) -> dict[str, Any]:
    rng = random.Random(7)
    tenant = f"bench-{uuid.uuid4().hex[:8]}"
    with tempfile.TemporaryDirectory(prefix="bench-git-") as scratch:
        repo = Path(scratch) / "repo"
        _make_repo(repo, files, rng)
        async with open_runtime(settings) as runtime:
            row = await add_source(
                runtime.store,
                tenant=tenant,
                name="bench",
                kind="git",
                settings={"url": repo.as_uri(), "branch": "main", "path": "runbooks"},
                credential=None,
                webhook_secret={"secret": "bench"},
            )
            reader = GitReader(
                name=f"{tenant}/bench",
                settings=GitSourceSettings.model_validate(row.settings),
                credential=None,
                cache_dir=Path(scratch) / "cache",
                max_file_bytes=settings.max_file_bytes,
                access=SourceAccess(allow_file=True),  # a file:// repository made here
            )
            limits = runtime.ingest_limits
            store, embedder = runtime.store, runtime.embedder
            try:
                first, first_cost = await _measured(
                    lambda: sync_source(store, embedder, row, reader, limits)
                )
                _change_repo(repo, files, rng)
                again, again_cost = await _measured(
                    lambda: sync_source(store, embedder, row, reader, limits)
                )
                result = {
                    "benchmark": "sources-git",
                    "machine": await machine_facts(store),
                    "embedding_model": embedder.model_id,
                    "files": files,
                    "first_sync": {**first_cost, **first.as_json()["documents"]},
                    "incremental_sync": {**again_cost, **again.as_json()["documents"]},
                }
            finally:
                await remove_source(store, row, prune=True)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=500)
    parser.add_argument("--output", type=Path, default=Path("bench/results"))
    args = parser.parse_args()
    result = asyncio.run(run_benchmark(Settings(), files=args.files))
    print(write_result(args.output, "sources-git", result))


if __name__ == "__main__":
    main()
