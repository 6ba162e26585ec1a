"""``runbook bench ingest``: ingestion throughput against the raw embedder, and re-ingest time.

Runs in throwaway tenants (``bench-…``) that are deleted afterwards, so it can share a store.
"""

from __future__ import annotations

import asyncio
import random
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from bench.results_file import machine_facts, write_result
from rag import (
    Embedder,
    IngestLimits,
    Settings,
    Store,
    chunk_runbook,
    discover_tenants,
    embed_text,
    ingest_path,
    list_runbook_files,
    open_runtime,
    parse_source,
    read_text,
)

_SERVICES = ("payments", "checkout", "search", "auth", "kafka", "redis", "postgres", "cdn")
_SYMPTOMS = ("5xx errors", "high latency", "consumer lag", "memory evictions", "disk pressure")


async def run_ingest_benchmark(
    settings: Settings, *, corpus: Path, synthetic_docs: int, output: Path
) -> int:
    run = uuid.uuid4().hex[:8]
    async with open_runtime(settings) as runtime:
        limits = runtime.ingest_limits
        result: dict[str, Any] = {
            "benchmark": "ingest",
            "machine": await machine_facts(runtime.store),
            "embedding_model": runtime.embedder.model_id,
            "onnx_threads": settings.onnx_threads,
        }
        try:
            result["demo_corpus"] = await _measure_folder(
                runtime.store, runtime.embedder, corpus, f"bench-{run}", limits, compare_raw=True
            )
            with tempfile.TemporaryDirectory() as folder:
                _write_synthetic(Path(folder), synthetic_docs)
                result["synthetic"] = await _measure_folder(
                    runtime.store,
                    runtime.embedder,
                    Path(folder),
                    f"bench-{run}-syn",
                    limits,
                    compare_raw=False,
                )
        finally:
            await _drop_bench_tenants(runtime.store, run)
    demo = result["demo_corpus"]
    result["targets"] = {
        "end_to_end_over_raw_ge_0_85": demo["end_to_end_over_raw"] >= 0.85,
        "demo_reingest_lt_1s": demo["reingest_unchanged_seconds"] < 1.0,
        "synthetic_reingest_lt_3s": result["synthetic"]["reingest_unchanged_seconds"] < 3.0,
    }
    print(await asyncio.to_thread(write_result, output, "ingest", result))
    return 0


async def _measure_folder(
    store: Store,
    embedder: Embedder,
    root: Path,
    prefix: str,
    limits: IngestLimits,
    *,
    compare_raw: bool,
) -> dict[str, Any]:
    folders = discover_tenants(root, None if compare_raw else prefix)
    first_seconds = 0.0
    chunks = 0
    documents = 0
    for folder in folders:
        tenant = folder.tenant if not compare_raw else f"{prefix}-{folder.tenant}"
        report = await ingest_path(
            store, embedder, folder.root, tenant=tenant, prune=False, limits=limits
        )
        first_seconds += report.seconds
        chunks += report.chunks_written
        documents += report.added + report.changed + report.superseded
    started = time.perf_counter()
    for folder in folders:
        tenant = folder.tenant if not compare_raw else f"{prefix}-{folder.tenant}"
        await ingest_path(store, embedder, folder.root, tenant=tenant, prune=False, limits=limits)
    reingest = time.perf_counter() - started
    measured: dict[str, Any] = {
        "documents": documents,
        "chunks": chunks,
        "ingest_seconds": round(first_seconds, 3),
        "end_to_end_chunks_per_s": round(chunks / first_seconds, 2) if first_seconds else None,
        "reingest_unchanged_seconds": round(reingest, 3),
    }
    if compare_raw:
        texts = _chunk_texts(root, limits)
        started = time.perf_counter()
        await embedder.embed(texts)
        raw = time.perf_counter() - started
        measured["raw_embedder_chunks_per_s"] = round(len(texts) / raw, 2)
        measured["end_to_end_over_raw"] = round(
            measured["end_to_end_chunks_per_s"] / measured["raw_embedder_chunks_per_s"], 3
        )
    return measured


def _chunk_texts(root: Path, limits: IngestLimits) -> list[str]:
    """The exact texts ingestion embeds, for the raw embedder's run on the same input."""
    texts = []
    for folder in discover_tenants(root, None):
        for path in list_runbook_files(folder.root):
            raw, text = read_text(path, max_bytes=limits.max_file_bytes)
            source = parse_source(folder.root, path, raw, text)
            for draft in chunk_runbook(
                source.runbook,
                max_chars=limits.chunk_max_chars,
                overlap_chars=limits.chunk_overlap_chars,
            ):
                texts.append(embed_text(source.runbook.title, draft.heading_path, draft.content))
    return texts


def _write_synthetic(folder: Path, count: int) -> None:
    """Short, deterministic runbooks: re-ingest cost is per file, not per token."""
    rng = random.Random(42)
    for number in range(count):
        service = rng.choice(_SERVICES)
        symptom = rng.choice(_SYMPTOMS)
        (folder / f"{service}-{number:04d}.md").write_text(
            f"---\nservice: {service}\n---\n# {service} {symptom} ({number})\n\n"
            f"## Mitigation\nRestart the {service} workers in region {number % 7} and watch "
            f"the {symptom} dashboard for ten minutes.\n",
            encoding="utf-8",
        )


async def _drop_bench_tenants(store: Store, run: str) -> None:
    async with store.pool.connection() as conn:
        await conn.execute("DELETE FROM tenants WHERE tenant_id LIKE %s", (f"bench-{run}%",))
