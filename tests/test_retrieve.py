"""Retrieval inside one tenant: both vector paths, keyword OR semantics, fusion bookkeeping."""

from __future__ import annotations

import pytest

from rag import FastEmbedder, Store
from rag.retrieve import ScopeHints, search

pytestmark = pytest.mark.usefixtures("demo_corpus")


async def test_exact_scan_and_hnsw_index_return_the_same_neighbours(
    store: Store, embedder: FastEmbedder
) -> None:
    question = "redis is evicting keys and memory is full"
    vector = (await embedder.embed([question]))[0]
    common = {
        "tenant": "acme",
        "question": question,
        "embedding": vector,
        "service": None,
        "candidates": 10,
        "hints": ScopeHints(),
    }
    exact = await search(store, exact=True, **common)  # type: ignore[arg-type]
    index = await search(store, exact=False, **common)  # type: ignore[arg-type]

    def ranked(found: object) -> list[int]:
        evidence = found.evidence  # type: ignore[attr-defined]
        return [
            e.chunk_id
            for e in sorted(evidence, key=lambda e: e.vector_rank or 99)
            if e.vector_rank is not None
        ]

    assert len(ranked(exact)) == 10
    assert ranked(exact) == ranked(index)


async def test_keyword_search_matches_any_question_term_and_keeps_both_ranks(
    store: Store, embedder: FastEmbedder
) -> None:
    # No chunk holds every one of these words; OR semantics still finds the exact error string.
    question = "ERR max number of clients reached zebra giraffe"
    vector = (await embedder.embed([question]))[0]
    found = await search(
        store,
        tenant="globex",
        question=question,
        embedding=vector,
        service=None,
        candidates=40,
        hints=ScopeHints(),
    )
    assert found.keyword_hits > 0
    top = found.evidence[0]
    assert top.document_id == "cache/redis-memory"
    assert top.vector_rank is not None and top.keyword_rank is not None
    assert {"vector#" + str(top.vector_rank), "keyword#" + str(top.keyword_rank)} <= set(
        top.hit_reasons
    )
    assert -1.0 <= top.cosine <= 1.0


async def test_question_of_only_stopwords_still_searches_by_vector(
    store: Store, embedder: FastEmbedder
) -> None:
    question = "what is it that we do"
    vector = (await embedder.embed([question]))[0]
    found = await search(
        store,
        tenant="acme",
        question=question,
        embedding=vector,
        service=None,
        candidates=10,
        hints=ScopeHints(),
    )
    assert found.keyword_hits == 0 and found.vector_hits == 10
