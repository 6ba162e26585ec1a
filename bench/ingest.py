"""``runbook bench ingest``: ingest throughput and peak memory, the settings before issue 26 next
to the configured ones, against the raw ONNX Runtime limit at the same lengths.

Each setting runs in a child process (``bench.ingest_child``) so each peak RSS is its own; both
ingest into throwaway tenants (``bench-…``) that are deleted afterwards, so it can share a store.
"""

from __future__ import annotations

import asyncio
import json
import os
import platform
import sys
import uuid
from pathlib import Path
from typing import Any

from bench.results_file import write_result
from rag import Settings

# Issue 26's targets: GitLab runbooks on a quiet 2-core machine.
TARGET_CHUNKS_PER_S = 28.0
TARGET_OVER_RAW = 0.85
TARGET_PEAK_RSS_MB = 1024
TARGET_QUERY_P50_MS = 10.0


async def run_ingest_benchmark(
    settings: Settings, *, corpus: Path, modes: list[str], questions: int, output: Path
) -> int:
    run = uuid.uuid4().hex[:8]
    result: dict[str, Any] = {
        "benchmark": "ingest",
        "machine": {
            "cpu_count": os.cpu_count(),
            "platform": platform.platform(),
            "python": sys.version.split()[0],
            "load_average_before": [round(v, 2) for v in os.getloadavg()],
        },
        "corpus": str(corpus),
        "onnx_threads": settings.embedding_threads,
        "settings": {
            "old": {"batch": "32 texts in input order", "max_tokens": 512, "cpu_mem_arena": True},
            "new": {
                "batch": f"{settings.embed_batch_tokens} padded tokens, length-sorted",
                "max_tokens": settings.embed_max_tokens,
                "cpu_mem_arena": False,
            },
        },
    }
    for mode in modes:
        result[mode] = await _child(mode, corpus, run, questions)
    result["machine"]["load_average_after"] = [round(v, 2) for v in os.getloadavg()]
    if "new" in result:
        result["summary"] = _summary(result)
    print(await asyncio.to_thread(write_result, output, "ingest", result))
    return 0


async def _child(mode: str, corpus: Path, run: str, questions: int) -> dict[str, Any]:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bench.ingest_child",
        mode,
        str(corpus),
        run,
        str(questions),
        stdout=asyncio.subprocess.PIPE,
    )
    out, _ = await process.communicate()
    if process.returncode != 0:
        raise SystemExit(f"bench ingest: the {mode!r} run failed (exit {process.returncode})")
    measured: dict[str, Any] = json.loads(out.decode().strip().splitlines()[-1])
    return measured


def _summary(result: dict[str, Any]) -> dict[str, Any]:
    new = result["new"]
    raw = new["raw_onnx"]
    summary: dict[str, Any] = {
        "end_to_end_over_raw": round(new["chunks_per_s"] / raw["chunks_per_s"], 3),
        "targets": {
            "chunks_per_s_ge_28": new["chunks_per_s"] >= TARGET_CHUNKS_PER_S,
            "end_to_end_over_raw_ge_0_85": new["chunks_per_s"] / raw["chunks_per_s"]
            >= TARGET_OVER_RAW,
            "peak_rss_le_1gb": new["peak_rss_mb"] <= TARGET_PEAK_RSS_MB,
            "query_p50_le_10ms": new["query_ms"]["p50"] <= TARGET_QUERY_P50_MS,
        },
    }
    if "old" in result:
        summary["speedup_over_old"] = round(new["chunks_per_s"] / result["old"]["chunks_per_s"], 2)
    return summary
