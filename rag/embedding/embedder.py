"""Text embedding with fastembed, off the event loop, with a bounded ONNX thread count.

Texts are embedded in length-sorted batches of a bounded padded size (``rag.embedding.batches``):
padding costs no compute and ONNX Runtime's buffers stay the size of one budget.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt
from tokenizers import Tokenizer

from rag.embedding.batches import token_budget_batches
from rag.embedding.model_files import DEFAULT_MODEL_FILES, assemble_default_model, sha256_of
from rag.embedding.native_heap import fix_mmap_threshold
from rag.embedding.ordinary_words import NO_ORDINARY_WORDS, OrdinaryWords
from rag.errors import EmbeddingError, ModelFileError
from rag.settings import DEFAULT_EMBEDDING_MODEL, Settings

logger = logging.getLogger(__name__)

Vectors = npt.NDArray[np.float32]


class Embedder(Protocol):
    """Turns texts into unit vectors; ``model_id`` names the exact weights (stored per chunk).

    ``ordinary_words`` are the words its tokenizer keeps whole (``rag.embedding.ordinary_words``).
    """

    model_id: str
    dim: int
    ordinary_words: OrdinaryWords

    async def embed(self, texts: Sequence[str]) -> Vectors: ...


class FastEmbedder:
    """fastembed's ``TextEmbedding`` in one dedicated worker thread.

    One worker because ONNX Runtime already uses ``embedding_threads`` cores per call; more workers
    would only oversubscribe the CPU.
    """

    def __init__(
        self,
        model: Any,
        *,
        model_id: str,
        dim: int,
        batch_tokens: int,
        ordinary_words: OrdinaryWords = NO_ORDINARY_WORDS,
    ) -> None:
        self._model = model
        self.model_id = model_id
        self.dim = dim
        self.ordinary_words = ordinary_words
        self._batch_tokens = batch_tokens
        self._lengths = _length_counter(model)
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="embed")
        self._lock = threading.Lock()

    @classmethod
    async def load(cls, settings: Settings) -> FastEmbedder:
        return await asyncio.to_thread(cls.load_sync, settings)

    @classmethod
    def load_sync(cls, settings: Settings) -> FastEmbedder:
        from fastembed import TextEmbedding

        fix_mmap_threshold()
        model_name = settings.embedding_model
        kwargs: dict[str, Any] = {
            "threads": settings.embedding_threads,
            "lazy_load": False,
            # The arena keeps the largest batch's buffers for the life of the process (GBs at
            # 32 × 512 tokens); without it each batch frees what it used.
            "enable_cpu_mem_arena": False,
        }
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
            max_tokens = _bound_input(model, settings.embed_max_tokens)
            probe = np.asarray(next(iter(model.embed(["probe"]))), dtype=np.float32)
        except (ValueError, OSError, RuntimeError) as exc:
            raise EmbeddingError(f"cannot load embedding model {model_name!r}: {exc}") from exc
        if max_tokens.shortened:
            # Vectors of a shorter input are other vectors: a store embedded with the model's
            # full input re-embeds once (ingest sees a different embedding_model).
            model_id = f"{model_id}:max{max_tokens.tokens}"
        logger.info(
            "embedding model %s loaded (dim %d, %d tokens per text, %d per batch)",
            model_id,
            probe.shape[0],
            max_tokens.tokens,
            settings.embed_batch_tokens,
        )
        return cls(
            model,
            model_id=model_id,
            dim=int(probe.shape[0]),
            batch_tokens=settings.embed_batch_tokens,
            # A hub model's files sit in fastembed's cache layout; without its tokenizer file no
            # word is ordinary and the gate reads every unused word as it did before.
            ordinary_words=(
                OrdinaryWords.from_model_dir(model_dir) if model_dir else NO_ORDINARY_WORDS
            ),
        )

    def embed_sync(self, texts: Sequence[str]) -> Vectors:
        """Unit vectors of ``texts`` in their order, embedded shortest first in token budgets."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        vectors = np.empty((len(texts), self.dim), dtype=np.float32)
        with self._lock:
            try:
                lengths = [len(e.ids) for e in self._lengths.encode_batch(list(texts))]
                for batch in token_budget_batches(lengths, self._batch_tokens):
                    chunk = [texts[i] for i in batch]
                    rows = list(self._model.embed(chunk, batch_size=len(chunk)))
                    vectors[batch] = np.asarray(rows, dtype=np.float32)
            except Exception as exc:  # onnxruntime raises its own untyped errors
                raise EmbeddingError(f"embedding failed: {type(exc).__name__}") from exc
        return vectors

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


@dataclass(frozen=True)
class InputBound:
    """Word pieces per text the model reads; ``shortened`` when below the model's own limit."""

    tokens: int
    shortened: bool


def _tokenizer_of(model: Any) -> Tokenizer:
    # fastembed's ONNX text models keep their configured tokenizer (truncation at the model's
    # limit, batch-longest padding) on ``TextEmbedding.model.tokenizer``.
    tokenizer = getattr(getattr(model, "model", None), "tokenizer", None)
    if not isinstance(tokenizer, Tokenizer):
        raise EmbeddingError("the embedding model has no word-piece tokenizer to batch by length")
    return tokenizer


def _bound_input(model: Any, max_tokens: int) -> InputBound:
    """Truncate the model's input at ``max_tokens`` when that is below its own limit."""
    tokenizer = _tokenizer_of(model)
    truncation = tokenizer.truncation or {}
    native = int(truncation.get("max_length", max_tokens))
    if max_tokens >= native:
        return InputBound(native, shortened=False)
    tokenizer.enable_truncation(
        max_length=max_tokens, direction=truncation.get("direction", "right")
    )
    return InputBound(max_tokens, shortened=True)


def _length_counter(model: Any) -> Tokenizer:
    """The model's tokenizer, truncating as it does but without padding: one text's length."""
    counter = Tokenizer.from_str(_tokenizer_of(model).to_str())
    counter.no_padding()
    return counter
