"""One setting of ``runbook bench ingest`` measured in a process of its own, so its peak RSS is
its own: ``python -m bench.ingest_child old|new CORPUS RUN`` prints one JSON object.

``old`` is the embedding before issue 26 (``bench.count_embedder``), ``new`` the configured
``FastEmbedder``; both ingest the same corpus into throwaway tenants (``bench-RUN-…``).
"""

from __future__ import annotations

import asyncio
import json
import resource
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from bench.count_embedder import CountBatchEmbedder
from bench.raw_onnx import measure_raw_onnx
from rag import (
    DEFAULT_EMBEDDING_MODEL,
    Embedder,
    FastEmbedder,
    IngestFileError,
    Settings,
    Store,
    assemble_default_model,
    chunk_runbook,
    discover_tenants,
    embed_text,
    ingest_limits,
    ingest_path,
    list_runbook_files,
    open_store,
    parse_source,
    read_text,
)

_QUESTIONS = Path(__file__).resolve().parents[1] / "evals" / "public" / "dev.jsonl"
_QUERY_WARMUP = 10


def model_dir(settings: Settings) -> Path:
    if settings.embedding_model_path is not None:
        return settings.embedding_model_path
    if settings.embedding_model != DEFAULT_EMBEDDING_MODEL:
        raise SystemExit(
            "bench ingest compares local model files; set RUNBOOK_EMBEDDING_MODEL_PATH"
        )
    return assemble_default_model(settings.models_dir)


async def measure(mode: str, corpus: Path, run: str, questions: int) -> dict[str, Any]:
    settings = Settings()
    folder = model_dir(settings)
    embedder: Embedder
    closer: FastEmbedder | None = None
    if mode == "old":
        embedder = await asyncio.to_thread(CountBatchEmbedder, folder, settings)
    else:
        embedder = closer = await FastEmbedder.load(settings)
    result: dict[str, Any] = {"embedding_model": embedder.model_id}
    try:
        async with open_store(settings) as store:
            try:
                result.update(await _ingest(store, embedder, corpus, f"bench-{run}-{mode}"))
            finally:
                async with store.pool.connection() as conn:
                    await conn.execute(
                        "DELETE FROM tenants WHERE tenant_id LIKE %s", (f"bench-{run}-{mode}%",)
                    )
        result["query_ms"] = await _query_latency(embedder, questions)
        # Before the raw run, whose second session would count: ru_maxrss is in KiB on Linux,
        # the whole process with its model and buffers.
        result["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
        if mode == "new":
            texts = chunk_texts(corpus, settings)
            result["raw_onnx"] = await asyncio.to_thread(measure_raw_onnx, folder, texts, settings)
    finally:
        if closer is not None:
            closer.close()
    return result


async def _ingest(store: Store, embedder: Embedder, corpus: Path, prefix: str) -> dict[str, Any]:
    limits = ingest_limits(Settings())
    chunks = 0
    seconds = 0.0
    embed_seconds = 0.0
    folders = discover_tenants(corpus, None)
    for folder in folders:
        report = await ingest_path(
            store,
            embedder,
            folder.root,
            tenant=f"{prefix}-{folder.tenant}",
            prune=False,
            limits=limits,
        )
        chunks += report.chunks_written
        seconds += report.seconds
        embed_seconds += report.embed_seconds
    started = time.perf_counter()
    for folder in folders:
        await ingest_path(
            store,
            embedder,
            folder.root,
            tenant=f"{prefix}-{folder.tenant}",
            prune=False,
            limits=limits,
        )
    return {
        "chunks": chunks,
        "ingest_seconds": round(seconds, 2),
        "chunks_per_s": round(chunks / seconds, 2) if seconds else None,
        "reingest_unchanged_seconds": round(time.perf_counter() - started, 3),
    }


async def _query_latency(embedder: Embedder, count: int) -> dict[str, float]:
    """One-line questions embedded one at a time, as ``RagService`` embeds a question."""
    with _QUESTIONS.open(encoding="utf-8") as lines:
        asked = [json.loads(line)["question"] for line in lines][: count + _QUERY_WARMUP]
    timings = []
    for number, question in enumerate(asked):
        started = time.perf_counter()
        await embedder.embed([question])
        if number >= _QUERY_WARMUP:
            timings.append((time.perf_counter() - started) * 1000)
    return {
        "questions": len(timings),
        "p50": round(statistics.median(timings), 2),
        "p95": round(statistics.quantiles(timings, n=20)[-1], 2),
    }


def chunk_texts(corpus: Path, settings: Settings) -> list[str]:
    """The exact texts ingestion embeds, for the raw run on the same length distribution."""
    limits = ingest_limits(settings)
    texts = []
    for folder in discover_tenants(corpus, None):
        for path in list_runbook_files(folder.root):
            try:
                raw, text = read_text(path, max_bytes=limits.max_file_bytes)
                source = parse_source(folder.root, path, raw, text)
            except IngestFileError:  # skipped or failed by ingest too: embeds nothing
                continue
            for draft in chunk_runbook(
                source.runbook,
                max_chars=limits.chunk_max_chars,
                overlap_chars=limits.chunk_overlap_chars,
            ):
                texts.append(embed_text(source.runbook.title, draft.heading_path, draft.content))
    return texts


def main(argv: list[str]) -> int:
    mode, corpus, run, questions = argv
    print(json.dumps(asyncio.run(measure(mode, Path(corpus), run, int(questions)))))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
