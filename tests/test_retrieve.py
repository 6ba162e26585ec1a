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

    async def nearest(exact: bool) -> list[int]:
        found = await search(
            store,
            tenant="acme",
            question=question,
            embedding=vector,
            service=None,
            candidates=10,
            hints=ScopeHints(),
            exact=exact,
        )
        by_rank = sorted((e.vector_rank, e.chunk_id) for e in found.evidence if e.vector_rank)
        return [chunk_id for _, chunk_id in by_rank]

    exact, index = await nearest(exact=True), await nearest(exact=False)
    assert len(exact) == 10
    assert exact == index


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
