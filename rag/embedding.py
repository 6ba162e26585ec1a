"""Text embedding with fastembed, off the event loop, with a bounded ONNX thread count."""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from rag.errors import EmbeddingError, ModelFileError
from rag.model_files import DEFAULT_MODEL_FILES, assemble_default_model, sha256_of
from rag.ordinary_words import NO_ORDINARY_WORDS, OrdinaryWords
from rag.settings import DEFAULT_EMBEDDING_MODEL, Settings

logger = logging.getLogger(__name__)

Vectors = npt.NDArray[np.float32]


class Embedder(Protocol):
    """Turns texts into unit vectors; ``model_id`` names the exact weights (stored per chunk).

    ``ordinary_words`` are the words its tokenizer keeps whole (``rag.ordinary_words``).
    """

    model_id: str
    dim: int
    ordinary_words: OrdinaryWords

    async def embed(self, texts: Sequence[str]) -> Vectors: ...


class FastEmbedder:
    """fastembed's ``TextEmbedding`` in one dedicated worker thread.

    One worker because ONNX Runtime already uses ``onnx_threads`` cores per call; more workers
    would only oversubscribe the CPU.
    """

    def __init__(
        self,
        model: Any,
        *,
        model_id: str,
        dim: int,
        batch_size: int,
        ordinary_words: OrdinaryWords = NO_ORDINARY_WORDS,
    ) -> None:
        self._model = model
        self.model_id = model_id
        self.dim = dim
        self.ordinary_words = ordinary_words
        self._batch_size = batch_size
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="embed")
        self._lock = threading.Lock()

    @classmethod
    async def load(cls, settings: Settings) -> FastEmbedder:
        return await asyncio.to_thread(cls.load_sync, settings)

    @classmethod
    def load_sync(cls, settings: Settings) -> FastEmbedder:
        from fastembed import TextEmbedding

        model_name = settings.embedding_model
        kwargs: dict[str, Any] = {"threads": settings.onnx_threads, "lazy_load": False}
        model_dir: Path | None = None
        if settings.embedding_model_path is not None:
            model_dir = settings.embedding_model_path
            model_id = f"{model_name}@{_fingerprint(model_dir)}"
            kwargs["specific_model_path"] = str(model_dir)
        elif model_name == DEFAULT_EMBEDDING_MODEL:
            model_dir = assemble_default_model(settings.models_dir)
            model_id = f"{model_name}@int8-{DEFAULT_MODEL_FILES[0].sha256[:12]}"
            kwargs["specific_model_path"] = str(model_dir)
        else:
            # Any fastembed model, for users whose machines can reach its model hub.
            model_id = model_name
            kwargs["cache_dir"] = str(settings.models_dir / "fastembed")
        try:
            model = TextEmbedding(model_name=model_name, **kwargs)
            probe = np.asarray(next(iter(model.embed(["probe"]))), dtype=np.float32)
        except (ValueError, OSError, RuntimeError) as exc:
            raise EmbeddingError(f"cannot load embedding model {model_name!r}: {exc}") from exc
        logger.info("embedding model %s loaded (dim %d)", model_id, probe.shape[0])
        return cls(
            model,
            model_id=model_id,
            dim=int(probe.shape[0]),
            batch_size=settings.embed_batch_size,
            # A hub model's files sit in fastembed's cache layout; without its tokenizer file no
            # word is ordinary and the gate reads every unused word as it did before.
            ordinary_words=(
                OrdinaryWords.from_model_dir(model_dir) if model_dir else NO_ORDINARY_WORDS
            ),
        )

    def embed_sync(self, texts: Sequence[str]) -> Vectors:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        with self._lock:
            try:
                rows = list(self._model.embed(list(texts), batch_size=self._batch_size))
            except Exception as exc:  # onnxruntime raises its own untyped errors
                raise EmbeddingError(f"embedding failed: {type(exc).__name__}") from exc
        return np.asarray(rows, dtype=np.float32)

    async def embed(self, texts: Sequence[str]) -> Vectors:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, self.embed_sync, list(texts))

    def close(self) -> None:
        self._executor.shutdown(wait=True)


def _fingerprint(model_dir: Path) -> str:
    onnx_files = sorted(model_dir.rglob("*.onnx"))
    if not onnx_files:
        raise ModelFileError(f"no .onnx file in RUNBOOK_EMBEDDING_MODEL_PATH {model_dir}")
    return sha256_of(onnx_files[0])[:12]
