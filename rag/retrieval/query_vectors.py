"""Question vectors, remembered: the same question (an alert posted again, in another channel, by
another tool; a mention with only its ``#123`` reference changed) is embedded once.

An LRU in front of an ``Embedder``, keyed by the exact search text; touched only on the event
loop (cachetools is not thread-safe), while the embedding itself runs off it.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from cachetools import LRUCache

from rag.embedding.embedder import Embedder

# 384 floats each with the default model: 1.5 MB for the lot.
QUERY_VECTORS_KEPT = 1024


class QueryVectors:
    def __init__(self, embedder: Embedder, *, kept: int = QUERY_VECTORS_KEPT) -> None:
        self.embedder = embedder
        self._vectors: LRUCache[str, npt.NDArray[np.float32]] = LRUCache(maxsize=kept)

    async def vector(self, text: str) -> npt.NDArray[np.float32]:
        """``text``'s unit vector (read-only: it is shared by every ask of the same text)."""
        found = self._vectors.get(text)
        if found is not None:
            return found
        rows = await self.embedder.embed([text])
        vector = np.asarray(rows[0], dtype=np.float32)
        vector.setflags(write=False)
        self._vectors[text] = vector
        return vector
