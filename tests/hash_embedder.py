"""A deterministic bag-of-words embedder: a real ``Embedder`` of another model and dimension.

Used where a test needs a *different* model than the real one (model mismatch, re-embedding).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

import numpy as np

from rag.embedding.embedder import Vectors
from rag.embedding.ordinary_words import NO_ORDINARY_WORDS


class HashEmbedder:
    def __init__(self, dim: int = 16, model_id: str = "test/hash-bag-of-words") -> None:
        self.dim = dim
        self.model_id = f"{model_id}-{dim}"
        self.ordinary_words = NO_ORDINARY_WORDS

    async def embed(self, texts: Sequence[str]) -> Vectors:
        matrix = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in re.findall(r"\w+", text.lower()):
                bucket = int.from_bytes(hashlib.sha256(word.encode()).digest()[:4], "big")
                matrix[row, bucket % self.dim] += 1.0
            norm = float(np.linalg.norm(matrix[row]))
            matrix[row] = matrix[row] / norm if norm else 1.0 / np.sqrt(self.dim)
        return matrix
