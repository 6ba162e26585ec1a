"""Retrieval inside one tenant: both vector paths, BM25 keyword scoring from the tenant's own
statistics, the embedding-model filter, fusion bookkeeping."""

from __future__ import annotations

from pathlib import Path

import pytest

from rag import FastEmbedder, Settings, Store, ingest_limits, ingest_path
from rag.retrieval.rank import ScopeHints
from rag.retrieval.retrieve import Candidates, search

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
        model=embedder.model_id,
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


async def _ingest_runbooks(
    store: Store, embedder: FastEmbedder, settings: Settings, root: Path, tenant: str
) -> None:
    await ingest_path(
        store, embedder, root, tenant=tenant, prune=False, limits=ingest_limits(settings)
    )


async def _term_df(store: Store, tenant: str) -> dict[str, int]:
    async with store.tenant_reader(tenant) as conn:
        cur = await conn.execute("SELECT lexeme, df FROM term_stats WHERE df > 0")
        return {lexeme: df for lexeme, df in await cur.fetchall()}


async def _counted_df(store: Store, tenant: str) -> dict[str, int]:
    async with store.pool.connection() as conn:
        cur = await conn.execute(
            "SELECT lexeme, count(*) FROM chunks, unnest(tsvector_to_array(tsv)) AS l(lexeme) "
            "WHERE tenant_id = %s AND NOT superseded GROUP BY lexeme",
            (tenant,),
        )
        return {lexeme: df for lexeme, df in await cur.fetchall()}


async def test_term_statistics_follow_ingest_and_supersession(
    store: Store, embedder: FastEmbedder, settings: Settings, tmp_path: Path, unique_tenant: str
) -> None:
    (tmp_path / "queue.md").write_text(
        "# Queue backlog\n\n## Mitigation\n\nScale the zanzibar workers to drain the backlog.\n"
    )
    (tmp_path / "disk.md").write_text("# Disk full\n\n## Mitigation\n\nDelete old backlog dumps.\n")
    await _ingest_runbooks(store, embedder, settings, tmp_path, unique_tenant)
    assert await _term_df(store, unique_tenant) == await _counted_df(store, unique_tenant)
    assert (await _term_df(store, unique_tenant))["zanzibar"] == 1

    (tmp_path / "queue.md").write_text("# Queue backlog\n\n## Mitigation\n\nAdd consumers.\n")
    await _ingest_runbooks(store, embedder, settings, tmp_path, unique_tenant)
    stats = await _term_df(store, unique_tenant)
    assert stats == await _counted_df(store, unique_tenant)
    assert "zanzibar" not in stats and stats["backlog"] == 2


async def test_term_statistics_are_visible_only_to_their_own_tenant(store: Store) -> None:
    async with store.tenant_reader("acme") as conn:
        cur = await conn.execute("SELECT DISTINCT tenant_id FROM term_stats")
        tenants = {row[0] for row in await cur.fetchall()}
        cur = await conn.execute("SELECT DISTINCT tenant_id FROM tenant_text_stats")
        tenants |= {row[0] for row in await cur.fetchall()}
    assert tenants == {"acme"}


async def test_bm25_ranks_the_chunk_with_the_rare_term_above_common_ones(
    store: Store, embedder: FastEmbedder, settings: Settings, tmp_path: Path, unique_tenant: str
) -> None:
    for i in range(6):
        (tmp_path / f"pods{i}.md").write_text(
            f"# Pods {i}\n\n## Diagnosis\n\nThe pod restarts; check the pod events and pod logs.\n"
        )
    (tmp_path / "ingress.md").write_text(
        "# Ingress\n\n## Diagnosis\n\nA pod behind the ingress returns a 502 from nginx.\n"
    )
    await _ingest_runbooks(store, embedder, settings, tmp_path, unique_tenant)
    found = await search_for(store, embedder, unique_tenant, "pod pod pod nginx", k=10, exact=True)
    by_keyword = sorted((e.keyword_rank, e.document_id) for e in found.evidence if e.keyword_rank)
    assert by_keyword[0][1] == "ingress"
    assert found.term_df["nginx"] == 1 and found.term_df["pod"] == 7
    assert found.tenant_chunks == 7


async def test_vectors_of_another_model_with_the_same_dimension_never_match(
    store: Store, embedder: FastEmbedder, settings: Settings, tmp_path: Path, unique_tenant: str
) -> None:
    (tmp_path / "quokka.md").write_text(
        "# Quokka gateway\n\n## Mitigation\n\nRestart the quokka gateway pods.\n"
    )
    await _ingest_runbooks(store, embedder, settings, tmp_path, unique_tenant)
    # The same row again, stamped as embedded by a different model of the same dimension.
    async with store.pool.connection() as conn:
        await conn.execute(
            "INSERT INTO chunks (tenant_id, document_id, version, ordinal, heading_path, content,"
            " superseded, service, embedding, embedding_model, embedding_dim, tsv, heading_tsv)"
            " SELECT tenant_id, document_id, version, ordinal + 1, heading_path, content,"
            " superseded, service, embedding, 'other/model-384', embedding_dim, tsv, heading_tsv"
            " FROM chunks WHERE tenant_id = %s",
            (unique_tenant,),
        )
    found = await search_for(
        store, embedder, unique_tenant, "restart the quokka gateway", k=10, exact=True
    )
    assert len(found.evidence) == 1
    assert found.vector_hits == 1 and found.keyword_hits == 1
