"""What ``RUNBOOK_SYNC_BATCH_BYTES`` costs and saves: a git source of large runbooks synced at
several batch byte budgets, with the sync's peak Python memory, its reads and its time.

    .venv/bin/python -m bench.sync_batch_bytes [--files 60] [--file-kb 300] [--budgets-mb 1,4]

Makes (once) a local git repository of ``--files`` Markdown runbooks of about ``--file-kb`` KB
each (a hundred headed steps), then syncs it into a new tenant per budget (``bench-…``, left
in the benchmark's own store under ``--data-dir``) through the shipped ``sync_source``: read,
parse, chunk, embed, write, in batches of 50 files or the budget. The embedder is a constant
384-dimension one (vectors the real model's size, none of its CPU), so the time is the sync's
own; peak memory is ``tracemalloc``'s (Python allocations: the batches' bodies, runbooks,
chunks and vectors). Budget 0 stands for none (items alone, as before). Prints one JSON object
and writes it to ``sync-batch-bytes.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import time
import tracemalloc
import uuid
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from bench.alert_posts import loadavg
from bench.results_file import machine_facts, write_result
from rag import (
    NO_ORDINARY_WORDS,
    GitReader,
    GitSourceSettings,
    Settings,
    SourceAccess,
    SourceListing,
    SourceRead,
    add_source,
    open_runtime,
    remove_source,
    sync_source,
)


class ConstantEmbedder:
    """Vectors of the real model's size at no CPU cost: the sync's own work is measured."""

    dim = 384
    model_id = "bench/constant-384"
    ordinary_words = NO_ORDINARY_WORDS

    async def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        return np.full((len(texts), self.dim), 1 / np.sqrt(self.dim), dtype=np.float32)


class ReadCounter:
    """A ``SourceReader`` through a real one, counting its reads."""

    def __init__(self, inner: GitReader) -> None:
        self.inner = inner
        self.reads = 0

    async def list_items(self) -> SourceListing:
        return await self.inner.list_items()

    async def read_items(
        self, listing: SourceListing, item_ids: Sequence[str], *, max_bytes: int | None = None
    ) -> SourceRead:
        self.reads += 1
        return await self.inner.read_items(listing, item_ids, max_bytes=max_bytes)


def make_repo(root: Path, files: int, file_kb: int) -> int:
    """The repository (made once); returns the bytes of its runbooks."""
    if not (root / ".git").exists():
        root.mkdir(parents=True, exist_ok=True)
        git = ["git", "-c", "user.name=bench", "-c", "user.email=bench@example.com"]
        subprocess.run([*git, "init", "-q", "-b", "main"], cwd=root, check=True)
        repeat = max(1, file_kb * 1000 // (100 * 40))
        for n in range(files):
            steps = "".join(
                f"## Step {k}\n\n" + f"Drain node {n} and restart pool {k}. " * repeat + "\n\n"
                for k in range(100)
            )
            (root / f"r{n:03}.md").write_text(f"# Runbook {n}\n\n{steps}", encoding="utf-8")
        subprocess.run([*git, "add", "-A"], cwd=root, check=True)
        subprocess.run([*git, "commit", "-q", "-m", "runbooks"], cwd=root, check=True)
    return sum(p.stat().st_size for p in root.glob("*.md"))


async def sync_once(runtime: Any, repo: Path, budget: int, work: Path) -> dict[str, object]:
    tenant = f"bench-{uuid.uuid4().hex[:8]}"
    row = await add_source(
        runtime.store,
        tenant=tenant,
        name="bench",
        kind="git",
        settings={"url": repo.as_uri()},
        credential=None,
        webhook_secret={"secret": "bench"},
    )
    reader = ReadCounter(
        GitReader(
            name=f"{tenant}/bench",
            settings=GitSourceSettings.model_validate(row.settings),
            credential=None,
            cache_dir=work / "cache" / str(row.source_id),
            max_file_bytes=runtime.settings.max_file_bytes,
            access=SourceAccess(allow_file=True),  # a file:// repository made here
        )
    )
    limits = replace(runtime.ingest_limits, sync_batch_bytes=budget or 1 << 62)
    tracemalloc.start()
    started = time.perf_counter()
    try:
        report = await sync_source(runtime.store, ConstantEmbedder(), row, reader, limits)
        seconds = time.perf_counter() - started
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
        await remove_source(runtime.store, row, prune=False)
    return {
        "budget_mb": budget / 1e6 if budget else None,
        "reads": reader.reads,
        "documents": report.added,
        "chunks": report.chunks_written,
        "seconds": round(seconds, 2),
        "peak_python_mb": round(peak / 1e6, 1),
    }


async def run(args: argparse.Namespace) -> dict[str, object]:
    settings = Settings(_env_file=None, data_dir=args.data_dir)  # type: ignore[call-arg]
    repo = args.work_dir / "repo"
    total = make_repo(repo, args.files, args.file_kb)
    budgets = [int(float(mb) * 1_000_000) for mb in args.budgets_mb.split(",")]
    async with open_runtime(settings) as runtime:
        before = loadavg()
        runs = [await sync_once(runtime, repo, budget, args.work_dir) for budget in budgets]
        after = loadavg()
        facts = await machine_facts(runtime.store)
        limits_items = runtime.ingest_limits.sync_batch_items
    return {
        "benchmark": "sync-batch-bytes",
        "files": args.files,
        "repository_mb": round(total / 1e6, 1),
        "batch_items": limits_items,
        "runs": runs,
        "machine": facts,
        "loadavg_before": before,
        "loadavg_after": after,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--files", type=int, default=60)
    parser.add_argument("--file-kb", type=int, default=300)
    parser.add_argument("--budgets-mb", default="1,2,4,8,16,0")
    parser.add_argument("--work-dir", type=Path, default=Path("/tmp/runbook-bench-sync-bytes"))
    parser.add_argument("--data-dir", type=Path, default=Path("/tmp/runbook-bench-sync-bytes/db"))
    parser.add_argument("--output", type=Path, default=Path("bench/results"))
    args = parser.parse_args()
    print(write_result(args.output, "sync-batch-bytes", asyncio.run(run(args))))


if __name__ == "__main__":
    main()
