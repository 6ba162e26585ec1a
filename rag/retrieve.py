"""Hybrid retrieval inside one tenant: pgvector HNSW + Postgres full text, fused with RRF.

Both candidate queries carry ``tenant_id = %(tenant)s AND NOT superseded`` in their own WHERE
clause; nothing is fetched across tenants and filtered afterwards.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from psycopg import sql

from rag.embedding import Vectors
from rag.evidence import Evidence
from rag.store import Store

# Reciprocal Rank Fusion constant from Cormack et al.; 60 is the value the literature and
# pgvector's own hybrid example use.
RRF_K = 60
# A scope hint adds what a first place in a third ranked list would: enough to reorder near
# ties, never enough to lift a chunk that neither retriever found.
HINT_BOOST = 1.0 / (RRF_K + 1)

_HYBRID = """
WITH keyword_query AS (
    SELECT tsquery_or_agg(plainto_tsquery('simple', t.lexeme)) AS q
    FROM unnest(to_tsvector('english', %(question)s)) AS t
),
vector_hits AS (
    SELECT chunk_id, row_number() OVER (ORDER BY distance, chunk_id) AS rank
    FROM (
        SELECT chunk_id, embedding::vector({dim}) <=> %(embedding)s::vector({dim}) AS distance
        FROM chunks
        WHERE tenant_id = %(tenant)s AND NOT superseded AND embedding_dim = {dim}
          AND (%(service)s::text IS NULL OR service = %(service)s::text)
        ORDER BY embedding::vector({dim}) <=> %(embedding)s::vector({dim})
        LIMIT %(candidates)s
    ) AS nearest
),
keyword_hits AS (
    SELECT chunk_id,
           row_number() OVER (ORDER BY ts_rank_cd(tsv, keyword_query.q) DESC, chunk_id) AS rank
    FROM chunks, keyword_query
    WHERE tenant_id = %(tenant)s AND NOT superseded AND embedding_dim = {dim}
      AND (%(service)s::text IS NULL OR service = %(service)s::text)
      AND tsv @@ keyword_query.q
    ORDER BY ts_rank_cd(tsv, keyword_query.q) DESC, chunk_id
    LIMIT %(candidates)s
)
SELECT c.chunk_id, c.document_id, c.version, d.title, c.heading_path, c.content, d.url, d.owner,
       d.updated, c.service,
       1 - (c.embedding::vector({dim}) <=> %(embedding)s::vector({dim})) AS cosine,
       v.rank AS vector_rank, k.rank AS keyword_rank
FROM vector_hits AS v
FULL OUTER JOIN keyword_hits AS k USING (chunk_id)
JOIN chunks AS c ON c.tenant_id = %(tenant)s AND c.chunk_id = coalesce(v.chunk_id, k.chunk_id)
JOIN documents AS d
  ON d.tenant_id = %(tenant)s AND d.document_id = c.document_id AND d.version = c.version
WHERE NOT c.superseded
"""


@dataclass(frozen=True)
class ScopeHints:
    """Ranking signals: services and documents the question or its channel points at."""

    services: frozenset[str] = frozenset()
    documents: frozenset[str] = frozenset()

    def reasons_for(self, evidence: Evidence) -> tuple[str, ...]:
        reasons = []
        if evidence.service is not None and evidence.service in self.services:
            reasons.append(f"service:{evidence.service}")
        if evidence.document_id in self.documents:
            reasons.append(f"named:{evidence.document_id}")
        return tuple(reasons)


@dataclass(frozen=True)
class Candidates:
    """Fused candidates, best first, and how many each retriever contributed."""

    evidence: tuple[Evidence, ...]
    vector_hits: int
    keyword_hits: int

    @property
    def best_cosine(self) -> float:
        return max((e.cosine for e in self.evidence), default=-1.0)


async def search(
    store: Store,
    *,
    tenant: str,
    question: str,
    embedding: Vectors,
    service: str | None,
    candidates: int,
    hints: ScopeHints,
    exact: bool = False,
    ef_search: int = 100,
) -> Candidates:
    """Run the hybrid query for one tenant (optionally one service) and fuse the ranks.

    ``exact`` scans the tenant's own rows instead of the shared HNSW graph: for a small tenant
    that is both faster and complete, where the graph would have to be walked far past other
    tenants' vectors to find k of its own.
    """
    vector = np.asarray(embedding, dtype=np.float32).reshape(-1)
    query = sql.SQL(_HYBRID).format(dim=sql.Literal(int(vector.shape[0])))
    params: dict[str, Any] = {
        "tenant": tenant,
        "question": question,
        "embedding": vector,
        "service": service,
        "candidates": candidates,
    }
    async with store.tenant_reader(tenant) as conn:
        if exact:
            # HNSW is only reachable through a plain index scan; bitmap scans on the tenant's
            # btree index stay available.
            await conn.execute("SET LOCAL enable_indexscan = off")
        else:
            # pgvector 0.8 iterative scans: keep walking the HNSW graph until enough rows pass
            # the tenant filter, so a tenant in a large shared table still gets its top k.
            await conn.execute("SET LOCAL hnsw.iterative_scan = strict_order")
            await conn.execute(
                sql.SQL("SET LOCAL hnsw.ef_search = {}").format(
                    sql.Literal(max(ef_search, candidates))
                )
            )
        cur = await conn.execute(query, params)
        rows = await cur.fetchall()
    return fuse([_row_to_evidence(row) for row in rows], hints)


def fuse(found: list[Evidence], hints: ScopeHints) -> Candidates:
    fused = []
    for item in found:
        score = 0.0
        reasons: list[str] = []
        if item.vector_rank is not None:
            score += 1.0 / (RRF_K + item.vector_rank)
            reasons.append(f"vector#{item.vector_rank}")
        if item.keyword_rank is not None:
            score += 1.0 / (RRF_K + item.keyword_rank)
            reasons.append(f"keyword#{item.keyword_rank}")
        hint_reasons = hints.reasons_for(item)
        score += HINT_BOOST * len(hint_reasons)
        fused.append(replace(item, score=score, hit_reasons=(*reasons, *hint_reasons)))
    fused.sort(key=lambda e: (-e.score, -e.cosine, e.chunk_id))
    return Candidates(
        evidence=tuple(fused),
        vector_hits=sum(1 for e in found if e.vector_rank is not None),
        keyword_hits=sum(1 for e in found if e.keyword_rank is not None),
    )


def cap_per_document(evidence: Collection[Evidence], limit: int) -> list[Evidence]:
    kept: list[Evidence] = []
    per_document: dict[str, int] = {}
    for item in evidence:
        seen = per_document.get(item.document_id, 0)
        if seen < limit:
            kept.append(item)
            per_document[item.document_id] = seen + 1
    return kept


def _row_to_evidence(row: Any) -> Evidence:
    (
        chunk_id,
        document_id,
        version,
        title,
        heading_path,
        content,
        url,
        owner,
        updated,
        service,
        cosine,
        vector_rank,
        keyword_rank,
    ) = row
    return Evidence(
        chunk_id=chunk_id,
        document_id=document_id,
        version=version,
        title=title,
        heading_path=tuple(heading_path),
        content=content,
        url=url,
        owner=owner,
        updated=updated,
        service=service,
        cosine=float(cosine),
        vector_rank=vector_rank,
        keyword_rank=keyword_rank,
        score=0.0,
    )
