"""The embedder's limit: ONNX Runtime alone on pre-tokenised, length-sorted batches, no padding.

Same model file, threads and graph optimisation as fastembed's session, same truncation and
token budget as the embedder; only ``session.run`` is timed, so this is what ingest could reach.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np

from rag import Settings, token_budget_batches


def measure_raw_onnx(model_dir: Path, texts: list[str], settings: Settings) -> dict[str, Any]:
    import onnxruntime as ort
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    tokenizer.no_padding()
    tokenizer.enable_truncation(max_length=settings.embed_max_tokens)
    encodings = tokenizer.encode_batch(texts)
    lengths = [len(e.ids) for e in encodings]
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.intra_op_num_threads = settings.embedding_threads
    options.inter_op_num_threads = settings.embedding_threads
    options.enable_cpu_mem_arena = False
    session = ort.InferenceSession(
        str(model_dir / "model.onnx"), sess_options=options, providers=["CPUExecutionProvider"]
    )
    batches = token_budget_batches(lengths, settings.embed_batch_tokens)
    inputs = [_padded([encodings[i].ids for i in batch]) for batch in batches]
    session.run(None, inputs[0])  # warm-up: the first run plans memory
    seconds = 0.0
    for feed in inputs:
        started = time.perf_counter()
        session.run(None, feed)
        seconds += time.perf_counter() - started
    return {
        "texts": len(texts),
        "tokens": sum(lengths),
        "mean_tokens": round(sum(lengths) / len(lengths), 1),
        "seconds": round(seconds, 2),
        "tokens_per_s": round(sum(lengths) / seconds),
        "chunks_per_s": round(len(texts) / seconds, 2),
    }


def _padded(rows: list[list[int]]) -> dict[str, Any]:
    width = max(map(len, rows))
    ids = np.zeros((len(rows), width), dtype=np.int64)
    mask = np.zeros_like(ids)
    for row, tokens in enumerate(rows):
        ids[row, : len(tokens)] = tokens
        mask[row, : len(tokens)] = 1
    return {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
