"""The embedding settings before issue 26, for ``runbook bench ingest`` to compare against:
fastembed batches of a fixed count in input order, each padded to its longest text (up to 512
tokens), with ONNX Runtime's memory arena on (its default)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt

from rag import NO_ORDINARY_WORDS, Settings

Vectors = npt.NDArray[np.float32]

OLD_BATCH_SIZE = 32


class CountBatchEmbedder:
    def __init__(self, model_dir: Path, settings: Settings, batch_size: int = OLD_BATCH_SIZE):
        from fastembed import TextEmbedding

        self._model = TextEmbedding(
            model_name=settings.embedding_model,
            specific_model_path=str(model_dir),
            threads=settings.embedding_threads,
            lazy_load=False,
        )
        self._batch_size = batch_size
        self.model_id = f"{settings.embedding_model}@bench-count-batches"
        self.dim = int(np.asarray(next(iter(self._model.embed(["probe"])))).shape[0])
        self.ordinary_words = NO_ORDINARY_WORDS

    def _embed_sync(self, texts: list[str]) -> Vectors:
        rows = list(self._model.embed(texts, batch_size=self._batch_size))
        return np.asarray(rows, dtype=np.float32).reshape(len(texts), self.dim)

    async def embed(self, texts: Sequence[str]) -> Vectors:
        return await asyncio.to_thread(self._embed_sync, list(texts))
