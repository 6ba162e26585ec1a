"""``runbook bench embed``: query embedding latency and batch throughput of the configured model.

Single questions go through ``FastEmbedder.embed`` exactly as ``RagService`` sends them (one text,
off the event loop); throughput embeds ~250-token runbook-like texts in one call.
"""

from __future__ import annotations

import asyncio
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

from bench.results_file import write_result
from bench.scale_samples import percentiles
from bench.synthetic import SyntheticCorpus, SyntheticSpec
from rag import DEFAULT_EMBEDDING_MODEL, FastEmbedder, Settings, assemble_default_model

_WARMUP = 10
_TARGET_TOKENS = 250


async def run_embed_benchmark(
    settings: Settings, *, questions: int, batch_texts: int, output: Path
) -> int:
    corpus = SyntheticCorpus(SyntheticSpec(chunks=max(2_000, batch_texts * 8), tenants=20))
    asked = _questions(corpus, questions)
    texts = _long_texts(corpus, batch_texts)
    loading = time.perf_counter()
    embedder = await FastEmbedder.load(settings)
    load_seconds = time.perf_counter() - loading
    try:
        for question in asked[:_WARMUP]:
            await embedder.embed([question])
        single: list[float] = []
        for question in asked:
            started = time.perf_counter()
            await embedder.embed([question])
            single.append((time.perf_counter() - started) * 1000)
        await embedder.embed(texts[:64])
        runs = []
        for _ in range(2):
            started = time.perf_counter()
            await embedder.embed(texts)
            runs.append(time.perf_counter() - started)
    finally:
        embedder.close()
    tokens = await asyncio.to_thread(_mean_tokens, settings, texts)
    result: dict[str, Any] = {
        "benchmark": "embed",
        "machine": {
            "cpu_count": os.cpu_count(),
            "platform": platform.platform(),
            "processor": platform.machine(),
            "python": sys.version.split()[0],
            "load_average": [round(v, 2) for v in os.getloadavg()],
        },
        "embedding_model": embedder.model_id,
        "dim": embedder.dim,
        "onnx_threads": settings.embedding_threads,
        "embed_batch_tokens": settings.embed_batch_tokens,
        "embed_max_tokens": settings.embed_max_tokens,
        "model_load_seconds": round(load_seconds, 2),
        "query": {"questions": len(single), "latency_ms": percentiles(single)},
        "batch": {
            "texts": len(texts),
            "mean_tokens": tokens,
            "mean_chars": round(sum(map(len, texts)) / len(texts)),
            "seconds_per_run": [round(r, 2) for r in runs],
            "chunks_per_s": round(len(texts) / min(runs), 1),
        },
    }
    result["targets"] = {"query_p50_le_10ms": result["query"]["latency_ms"]["p50"] <= 10.0}
    print(await asyncio.to_thread(write_result, output, "embed", result))
    return 0


def _questions(corpus: SyntheticCorpus, count: int) -> list[str]:
    found: list[str] = []
    rank = 0
    while len(found) < count:
        found.extend(q.question for q in corpus.queries(rank % corpus.spec.tenants, 10, stream=3))
        rank += 1
    return found[:count]


def _long_texts(corpus: SyntheticCorpus, count: int) -> list[str]:
    """Runbook-like texts of ~250 tokens: consecutive synthetic chunks of one tenant joined."""
    pieces = [
        text
        for rank in range(corpus.spec.tenants)
        for *_, text, _, _ in corpus.tenant_rows(rank).chunks
    ]
    per_text = 4  # four ~300-character chunks ≈ 250 word pieces
    return [" ".join(pieces[i * per_text : (i + 1) * per_text]) for i in range(count)]


def _mean_tokens(settings: Settings, texts: list[str]) -> float | None:
    """Mean word pieces per text with the model's own tokenizer (no truncation), if found."""
    if settings.embedding_model_path is not None:
        folder = settings.embedding_model_path
    elif settings.embedding_model == DEFAULT_EMBEDDING_MODEL:
        folder = assemble_default_model(settings.models_dir)
    else:
        return None
    path = folder / "tokenizer.json"
    if not path.exists():
        return None
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(path))
    tokenizer.no_truncation()
    counts = [len(encoding.ids) for encoding in tokenizer.encode_batch(texts)]
    return round(sum(counts) / len(counts), 1)
