"""Hybrid retrieval inside one tenant: pgvector (halfvec) + BM25 over Postgres full text.

Every query carries ``tenant_id = %(tenant)s AND NOT superseded`` in its own WHERE clause and
runs under row-level security; nothing is fetched across tenants and filtered afterwards. The
keyword half fetches its candidates through ``tenant_chunks_matching`` (which also requires the
tenant the policy reads, see ``rag/store/sql/013_keyword_candidates.sql``) and scores them with BM25
from the tenant's own statistics (``term_stats``, kept by triggers, see
``rag/store/sql/005_term_statistics.sql``); both halves only see chunks embedded by the question's
model. ``rag.retrieval.ranker`` fuses the two lists."""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from psycopg import sql

from rag.embedding.embedder import Vectors
from rag.retrieval.compounds import other_spellings, spellings
from rag.retrieval.evidence import Evidence
from rag.retrieval.queries import (
    BM25_PARAMS,
    HYBRID_QUERY,
    SPELLED_AS,
    TENANT_SIZE,
    VECTOR_QUERY,
    VOCABULARY,
)
from rag.retrieval.rank import ScopeHints
from rag.retrieval.ranker import RankModel, fuse_both
from rag.retrieval.terms import keyword_text
from rag.store.connection import Store, TenantRead

__all__ = [
    "BM25_PARAMS",
    "HYBRID_QUERY",
    "VECTOR_QUERY",
    "Candidates",
    "ScopeHints",
    "cap_per_document",
    "search",
]

_WORD_RUN = re.compile(r"[^\W_]+")


def word_runs(text: str) -> list[str]:
    """The runs of letters and digits of ``text``, lower-cased: the words the vocabulary query
    looks up one by one, and so the words ``Candidates.term_words`` spells."""
    return _WORD_RUN.findall(text.lower())


@dataclass(frozen=True)
class Candidates:
    """Fused candidates, best first, how many each retriever contributed, and the tenant's
    vocabulary statistics for the question's lexemes (the gate reads those): each lexeme's
    document frequency and the question's words it came from. ``spelling_df`` holds the
    lexemes only the other spellings of the question's phrasal verbs give ("failov" for "fail
    over") that the tenant uses: the ranker reads them beside ``term_df``; the gate counts a
    chunk holding one as holding the lexeme the question wrote instead (``spelled_as``), so a
    "failover" section covers "fail over" as the question's own words would."""

    evidence: tuple[Evidence, ...]
    vector_hits: int
    keyword_hits: int
    term_df: dict[str, int] = field(default_factory=dict)
    tenant_chunks: int = 0
    term_words: dict[str, tuple[str, ...]] = field(default_factory=dict)
    spelling_df: dict[str, int] = field(default_factory=dict)
    spelled_as: dict[str, str] = field(default_factory=dict)
    # The candidates in relevance order when ``evidence`` opens with another runbook
    # (``rag.retrieval.ranker.best_opening_first``); the gate reads this order.
    relevance: tuple[Evidence, ...] = ()

    @property
    def ranked_for_gate(self) -> tuple[Evidence, ...]:
        return self.relevance or self.evidence

    @property
    def ranking_df(self) -> dict[str, int]:
        """The document frequencies the ranker's features read."""
        return {**self.term_df, **self.spelling_df}

    @property
    def best_cosine(self) -> float:
        return max((e.cosine for e in self.evidence), default=-1.0)


# How many sections of a runbook named by its alert join the candidates besides the two halves'
# hits: its nearest ones, enough for a runbook's usual Meaning, Impact, Diagnosis, Mitigation.
NAMED_SECTIONS = 8


async def search(
    store: Store,
    *,
    tenant: str,
    question: str,
    embedding: Vectors,
    model: str,
    service: str | None,
    candidates: int,
    hints: ScopeHints,
    exact: bool = False,
    ef_search: int = 200,
    rank_model: RankModel | None = None,
) -> Candidates:
    """Run the hybrid query for one tenant (optionally one service) and fuse the ranks.

    ``model`` is the embedding model id of ``embedding``: vectors of another model of the same
    dimension are not comparable and never match. ``exact`` scans the tenant's own rows instead
    of walking an HNSW graph: the only path for a tenant in the shared partitions (they have no
    HNSW index), and for a small tenant both faster and complete. ``ef_search`` 200: at 100 the
    graph of a 2,700-chunk tenant partition (public eval, gitlab) missed a rank-8 neighbour.
    """
    vector = np.asarray(embedding, dtype=np.float32).reshape(-1)
    query = sql.SQL(HYBRID_QUERY).format(dim=sql.Literal(int(vector.shape[0])))
    params: dict[str, Any] = {
        "tenant": tenant,
        "question": searched_text(question),
        "asked": keyword_text(question),
        "embedding": vector,
        "model": model,
        "service": service,
        "candidates": candidates,
        "words": sorted(set(word_runs(keyword_text(question)))),
        "named": hints.alert_document,
        "named_sections": NAMED_SECTIONS,
        **BM25_PARAMS,
    }
    # Plan every search for its own tenant and question: once psycopg prepares the query
    # (prepare_threshold), Postgres may switch to a generic plan that guesses at both, which
    # ran the hybrid query 2-4x slower on a 35k-chunk tenant. The settings go with the tenant's
    # own, in the same round trip.
    planning: list[sql.SQL | sql.Composed]
    if exact:
        # HNSW is only reachable through a plain index scan; bitmap scans on the tenant's
        # btree index stay available. The shared partitions have no HNSW at all. On a tenant's
        # own partition Postgres 18 still picks the disabled HNSW scan under a LIMIT (an
        # ordered Append over one partition) when it looks cheaper; ef_search 1000 makes
        # pgvector's cost estimate say otherwise (measured: a sequential scan then), and a
        # walk that still happens visits up to 1,000 candidates.
        planning = [
            sql.SQL("SET LOCAL plan_cache_mode = force_custom_plan"),
            sql.SQL("SET LOCAL enable_indexscan = off"),
            sql.SQL("SET LOCAL hnsw.iterative_scan = strict_order"),
            sql.SQL("SET LOCAL hnsw.ef_search = 1000"),
        ]
    else:
        # pgvector 0.8 iterative scans: keep walking the HNSW graph until enough rows pass
        # the tenant filter, so a tenant in a large shared table still gets its top k.
        planning = [
            sql.SQL("SET LOCAL plan_cache_mode = force_custom_plan"),
            sql.SQL("SET LOCAL hnsw.iterative_scan = strict_order"),
            sql.SQL("SET LOCAL hnsw.ef_search = {}").format(
                sql.Literal(max(ef_search, candidates))
            ),
        ]
    # BEGIN, the settings, the reads and COMMIT in one round trip (a pipeline): otherwise each
    # is a wake-up of the backend and of this loop, psycopg being the largest share of a busy
    # replica's loop samples (docs/benchmarks.md, "Where an answer's time goes").
    pairs = spellings(question)
    reads: list[TenantRead] = [
        (query, params),
        (VOCABULARY, params),
        (TENANT_SIZE, params),
    ]
    if pairs:
        spelled = {"written": [w for w, _ in pairs], "other": [o for _, o in pairs]}
        reads.append((SPELLED_AS, spelled))
    rows, vocabulary, sized, *written = await store.tenant_reads(tenant, reads, also=planning)
    size = sized[0] if sized else None
    spelled_as: dict[str, str] = {}
    for other, asked in written[0] if written else []:
        spelled_as.setdefault(str(other), str(asked))
    tenant_chunks = int(size[0]) if size else 0
    term_df = {str(lexeme): int(df) for lexeme, df, _, asked in vocabulary if asked}
    spelling_df = {str(lexeme): int(df) for lexeme, df, _, asked in vocabulary if not asked}
    found = [_row_to_evidence(row) for row in rows]
    ranking_df = {**term_df, **spelling_df}
    fused, relevance = fuse_both(
        found, hints, question, term_df=ranking_df, tenant_chunks=tenant_chunks, model=rank_model
    )
    return Candidates(
        evidence=fused,
        vector_hits=sum(1 for e in fused if e.vector_rank is not None),
        keyword_hits=sum(1 for e in fused if e.keyword_rank is not None),
        term_df=term_df,
        tenant_chunks=tenant_chunks,
        term_words={str(lexeme): tuple(words) for lexeme, _, words, asked in vocabulary if asked},
        spelling_df=spelling_df,
        spelled_as={o: a for o, a in spelled_as.items() if o in spelling_df and a in term_df},
        relevance=relevance if relevance != fused else (),
    )


def searched_text(question: str) -> str:
    """What the keyword half looks for: the question as ``keyword_text`` reads it, and the other
    spelling of each of its phrasal verbs ("fail over" also as "failover")."""
    return " ".join((keyword_text(question), *other_spellings(question)))


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
        bm25,
        matched,
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
        bm25=float(bm25),
        matched_terms=tuple(matched),
    )
