"""A question asked again (a repeated alert, a mention differing only in its ``#123``) is
embedded once; a different question, or one pushed out of the LRU, is embedded anew."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from rag.embedding.embedder import Vectors
from rag.retrieval.query_vectors import QueryVectors
from tests.hash_embedder import HashEmbedder


class CountingEmbedder(HashEmbedder):
    """The hash embedder, counting the texts it was asked to embed."""

    def __init__(self) -> None:
        super().__init__()
        self.texts: list[str] = []

    async def embed(self, texts: Sequence[str]) -> Vectors:
        self.texts.extend(texts)
        return await super().embed(texts)


async def test_the_same_question_is_embedded_once() -> None:
    embedder = CountingEmbedder()
    vectors = QueryVectors(embedder)
    first = await vectors.vector("how do I fail over the payments database?")
    again = await vectors.vector("how do I fail over the payments database?")
    other = await vectors.vector("why is the payments gateway throwing 502s?")
    assert embedder.texts == [
        "how do I fail over the payments database?",
        "why is the payments gateway throwing 502s?",
    ]
    assert np.array_equal(first, again)
    assert not np.array_equal(first, other)


async def test_a_shared_vector_cannot_be_changed_by_one_asker() -> None:
    vector = await QueryVectors(CountingEmbedder()).vector("restart the ingress")
    with pytest.raises(ValueError, match="read-only"):
        vector[0] = 1.0


async def test_the_least_recently_asked_question_is_embedded_again() -> None:
    embedder = CountingEmbedder()
    vectors = QueryVectors(embedder, kept=2)
    for text in ("a1 alert", "b2 alert", "a1 alert", "c3 alert", "a1 alert", "b2 alert"):
        await vectors.vector(text)
    assert embedder.texts == ["a1 alert", "b2 alert", "c3 alert", "b2 alert"]
