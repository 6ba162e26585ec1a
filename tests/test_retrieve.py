"""Retrieval inside one tenant: both vector paths, keyword OR semantics, fusion bookkeeping."""

from __future__ import annotations

import pytest

from rag import FastEmbedder, Store
from rag.retrieve import Candidates, ScopeHints, search

pytestmark = pytest.mark.usefixtures("demo_corpus")


async def search_for(
    store: Store, embedder: FastEmbedder, tenant: str, question: str, *, k: int, exact: bool
) -> Candidates:
    vector = (await embedder.embed([question]))[0]
    return await search(
        store,
        tenant=tenant,
        question=question,
        embedding=vector,
        service=None,
        candidates=k,
        hints=ScopeHints(),
        exact=exact,
    )


async def test_exact_scan_and_hnsw_index_return_the_same_neighbours(
    store: Store, embedder: FastEmbedder
) -> None:
    async def nearest(exact: bool) -> list[int]:
        found = await search_for(
            store, embedder, "acme", "redis is evicting keys and memory is full", k=10, exact=exact
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
    found = await search_for(store, embedder, "globex", question, k=40, exact=False)
    assert found.keyword_hits > 0
    top = found.evidence[0]
    assert top.document_id == "cache/redis-memory"
    assert top.vector_rank is not None and top.keyword_rank is not None
    assert {f"vector#{top.vector_rank}", f"keyword#{top.keyword_rank}"} <= set(top.hit_reasons)
    assert -1.0 <= top.cosine <= 1.0


async def test_question_of_only_stopwords_still_searches_by_vector(
    store: Store, embedder: FastEmbedder
) -> None:
    found = await search_for(store, embedder, "acme", "what is it that we do", k=10, exact=True)
    assert found.keyword_hits == 0 and found.vector_hits == 10
