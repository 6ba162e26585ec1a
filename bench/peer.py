"""``runbook bench peer``: the scale benchmark's data and queries through langchain-postgres.

The peer is what a team following langchain-postgres' ``PGVectorStore`` quickstart would build:
one table, the tenant as a metadata column used as a filter, the default HNSW index and query
options. Its embeddings are the synthetic vectors (a precomputed ``Embeddings``, so no model
loads). Each query runs through the peer and, interleaved, through our ``search()`` on the scale
benchmark's store, so both see the same machine load. langchain-postgres is imported at run time
only; it is not a dependency of the project.
"""

from __future__ import annotations

import asyncio
import importlib
import os
import time
import uuid
from pathlib import Path
from typing import Any

import numpy as np
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict
from pydantic import SecretStr

from bench.results_file import machine_facts, write_result
from bench.scale_measure import bucket_queries, bucket_ranks
from bench.scale_queries import exact_truth, run_hybrid, run_vector, without_vectors
from bench.scale_report import server_facts
from bench.scale_samples import K, Samples, recall_at_k
from bench.scale_variants import EXACT, HNSW
from bench.synthetic import Query, SyntheticCorpus, SyntheticSpec
from bench.synthetic_store import load_corpus, mark_database, prepare_database, size_label
from rag import (
    CANDIDATES_PER_RETRIEVER,
    ConfigurationError,
    Settings,
    Store,
    open_store,
    resolve_database_url,
)

_TABLE = "runbook_chunks"
_ID_NAMESPACE = uuid.UUID("5b0d1f55-7a2e-4c55-9a57-3d9c4e0c1a11")
_BATCH = 1_000

# Brute force on the peer's table within the tenant: its ground truth.
_PEER_TRUTH = """
SELECT langchain_id::text FROM runbook_chunks WHERE tenant = %(tenant)s
ORDER BY embedding <=> %(embedding)s::vector LIMIT %(k)s
"""


class PrecomputedEmbeddings:
    """langchain's ``Embeddings`` interface over vectors computed elsewhere: no model loads."""

    def __init__(self, vectors: dict[str, list[float]]) -> None:
        self.vectors = vectors

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self.vectors[text] for text in texts]

    def embed_query(self, text: str) -> list[float]:
        return self.vectors[text]

    async def aembed_documents(self, texts: list[str]) -> list[list[float]]:
        return self.embed_documents(texts)

    async def aembed_query(self, text: str) -> list[float]:
        return self.embed_query(text)


def _peer_modules() -> dict[str, Any]:
    try:
        return {
            "lc": importlib.import_module("langchain_postgres"),
            "indexes": importlib.import_module("langchain_postgres.v2.indexes"),
            "sqlalchemy": importlib.import_module("sqlalchemy.engine"),
            "version": importlib.import_module("importlib.metadata").version("langchain-postgres"),
        }
    except ImportError as exc:
        raise ConfigurationError(
            "the peer benchmark needs langchain-postgres, installed beside the project "
            f"without its pgvector<0.4 pin (see bench/README.md): {exc}"
        ) from exc


def _sqlalchemy_url(modules: dict[str, Any], conninfo: str) -> Any:
    parts = conninfo_to_dict(conninfo)
    query = {"host": str(parts["host"])} if "host" in parts else {}
    return modules["sqlalchemy"].URL.create(
        "postgresql+psycopg",
        username=parts.get("user"),
        password=parts.get("password") or None,
        host=None,
        port=int(str(parts["port"])) if "port" in parts else None,
        database=parts.get("dbname"),
        query=query,
    )


async def _load_peer(modules: dict[str, Any], engine: Any, corpus: SyntheticCorpus) -> Any:
    """The quickstart's steps: create the table, add the embeddings, apply the HNSW index."""
    lc = modules["lc"]
    timings: dict[str, float] = {}
    await engine.ainit_vectorstore_table(
        table_name=_TABLE,
        vector_size=corpus.spec.dim,
        metadata_columns=[lc.Column("tenant", "TEXT")],
        overwrite_existing=True,
    )
    store = await lc.PGVectorStore.create(
        engine=engine,
        table_name=_TABLE,
        embedding_service=PrecomputedEmbeddings({}),
        metadata_columns=["tenant"],
    )
    started = time.perf_counter()
    for rank in range(corpus.spec.tenants):
        rows = await asyncio.to_thread(corpus.tenant_rows, rank)
        for begin in range(0, len(rows.chunks), _BATCH):
            batch = rows.chunks[begin : begin + _BATCH]
            await store.aadd_embeddings(
                texts=[text for _, _, _, text, _, _ in batch],
                embeddings=rows.vectors[begin : begin + _BATCH].tolist(),
                metadatas=[{"tenant": rows.tenant, "document_id": doc} for doc, *_ in batch],
                ids=[
                    str(uuid.uuid5(_ID_NAMESPACE, f"{rows.tenant}/{doc}/{ordinal}"))
                    for doc, ordinal, *_ in batch
                ],
            )
    timings["add_embeddings_seconds"] = time.perf_counter() - started
    started = time.perf_counter()
    await store.aapply_vector_index(modules["indexes"].HNSWIndex())
    timings["hnsw_build_seconds"] = time.perf_counter() - started
    return {name: round(value, 2) for name, value in timings.items()}


async def _peer_truth(store: Store, query: Query) -> list[str]:
    async with store.pool.connection() as conn, conn.transaction():
        await conn.execute("SET LOCAL enable_indexscan = off")
        cur = await conn.execute(
            _PEER_TRUTH, {"tenant": query.tenant, "embedding": query.vector, "k": K}
        )
        return [row[0] for row in await cur.fetchall()]


async def _peer_explain(store: Store, query: Query) -> list[str]:
    """The plan of the peer's query shape (its SELECT without the returned columns)."""
    async with store.pool.connection() as conn:
        cur = await conn.execute(
            "EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) SELECT langchain_id FROM runbook_chunks "
            "WHERE tenant = %(tenant)s ORDER BY embedding <=> %(embedding)s::vector LIMIT %(k)s",
            {"tenant": query.tenant, "embedding": query.vector, "k": K},
        )
        rows = await cur.fetchall()
    return [without_vectors(str(row[0])) for row in rows]


async def _peer_search(peer: Any, query: Query) -> tuple[float, list[str]]:
    started = time.perf_counter()
    documents = await peer.asimilarity_search_by_vector(
        query.vector.tolist(), k=K, filter={"tenant": {"$eq": query.tenant}}
    )
    return (time.perf_counter() - started) * 1000, [str(d.id) for d in documents]


async def measure_peer(
    ours: Store,
    peer_store: Store,
    peer: Any,
    corpus: SyntheticCorpus,
    *,
    queries_per_bucket: int,
    warmup: int,
    exact_max: int,
) -> dict[str, Any]:
    buckets: dict[str, Any] = {}
    candidates = CANDIDATES_PER_RETRIEVER
    for bucket, ranks in bucket_ranks(corpus.sizes, exact_max).items():
        for query in bucket_queries(corpus, ranks, warmup, stream=2):
            await _peer_search(peer, query)
            await run_hybrid(
                ours, query, exact=query.tenant_chunks <= exact_max, candidates=candidates
            )
        theirs, mine = Samples(), Samples()
        slowest: tuple[float, Query] | None = None
        queries = bucket_queries(corpus, ranks, queries_per_bucket, stream=1)
        for number, query in enumerate(queries):
            expected = min(K, query.tenant_chunks)
            exact = query.tenant_chunks <= exact_max
            their_truth = await _peer_truth(peer_store, query)
            our_truth = await exact_truth(ours, query, dim=corpus.spec.dim)
            mode = EXACT if exact else HNSW
            for turn in np.random.default_rng([number, 3]).permutation(3):
                if turn == 0:
                    ms, ids = await _peer_search(peer, query)
                    theirs.vector_ms.append(ms)
                    theirs.recall.append(recall_at_k(ids, their_truth))
                    theirs.short_vector += len(ids) < expected
                    if slowest is None or ms > slowest[0]:
                        slowest = (ms, query)
                elif turn == 1:
                    hit = await run_hybrid(ours, query, exact=exact, candidates=candidates)
                    mine.add_hybrid(hit, our_truth, expected, query)
                else:
                    hit = await run_vector(
                        ours, query, mode, candidates=candidates, dim=corpus.spec.dim
                    )
                    mine.add_vector(hit, our_truth, expected)
        peer_summary, our_summary = theirs.summary(), mine.summary()
        buckets[bucket] = {
            "tenant_chunks": {
                "min": min(corpus.sizes[r] for r in ranks),
                "max": max(corpus.sizes[r] for r in ranks),
            },
            "queries": len(queries),
            "peer_vector_search": peer_summary,
            "ours_service_rule": our_summary,
            "peer_over_ours_vector": {
                p: round(peer_summary["vector_ms"][p] / our_summary["vector_ms"][p], 2)
                for p in ("p50", "p95")
            },
            "peer_over_ours_hybrid": {
                p: round(peer_summary["vector_ms"][p] / our_summary["hybrid_ms"][p], 2)
                for p in ("p50", "p95")
            },
        }
        if slowest is not None:
            buckets[bucket]["peer_explain_slowest"] = {
                "tenant": slowest[1].tenant,
                "measured_ms": round(slowest[0], 2),
                "plan": await _peer_explain(peer_store, slowest[1]),
            }
    return buckets


async def run_peer_benchmark(
    settings: Settings,
    *,
    chunks: int,
    tenants: int,
    queries: int,
    warmup: int,
    seed: int,
    rebuild: bool,
    output: Path,
) -> int:
    modules = _peer_modules()
    spec = SyntheticSpec(chunks=chunks, tenants=tenants, seed=seed)
    corpus = SyntheticCorpus(spec)
    label = size_label(chunks) + ("" if tenants == 1000 else f"-{tenants}t")
    base_url = await resolve_database_url(settings)
    fingerprint = {**spec.as_json(), "langchain_postgres": modules["version"]}
    peer_name = f"runbook_bench_peer_{label}".replace("-", "_")
    peer_info, peer_marker = await prepare_database(
        base_url, peer_name, fingerprint, rebuild=rebuild
    )
    ours_name = f"runbook_bench_scale_{label}".replace("-", "_")
    ours_info, ours_marker = await prepare_database(
        base_url, ours_name, spec.as_json(), rebuild=False
    )
    engine = modules["lc"].PGEngine.from_connection_string(url=_sqlalchemy_url(modules, peer_info))
    ours_settings = settings.model_copy(update={"database_url": SecretStr(ours_info)})
    peer_settings = settings.model_copy(update={"database_url": SecretStr(peer_info)})
    try:
        async with open_store(ours_settings) as ours, open_store(peer_settings) as peer_store:
            if ours_marker is None:
                ours_load = await load_corpus(ours, corpus, conninfo=ours_info, bulk=True)
                await mark_database(
                    base_url, ours_name, {"spec": spec.as_json(), "load": ours_load}
                )
            if peer_marker is None:
                load = await _load_peer(modules, engine, corpus)
                async with peer_store.pool.connection() as conn:
                    await conn.execute(
                        sql.SQL("VACUUM (ANALYZE) {}").format(sql.Identifier(_TABLE))
                    )
                await mark_database(base_url, peer_name, {"spec": fingerprint, "load": load})
            else:
                load = peer_marker["load"]
            peer = await modules["lc"].PGVectorStore.create(
                engine=engine,
                table_name=_TABLE,
                embedding_service=PrecomputedEmbeddings({}),
                metadata_columns=["tenant"],
            )
            before = os.getloadavg()
            buckets = await measure_peer(
                ours,
                peer_store,
                peer,
                corpus,
                queries_per_bucket=queries,
                warmup=warmup,
                exact_max=settings.exact_search_max_chunks,
            )
            result: dict[str, Any] = {
                "benchmark": "peer",
                "machine": {
                    **await machine_facts(ours),
                    "server": await server_facts(ours),
                    "load_average_before_after": [
                        [round(v, 2) for v in before],
                        [round(v, 2) for v in os.getloadavg()],
                    ],
                },
                "peer": {
                    "package": f"langchain-postgres {modules['version']}",
                    "store": "PGVectorStore (quickstart): tenant as a metadata column filter, "
                    "HNSWIndex() defaults (m=16, ef_construction=64), no query options "
                    "(hnsw.ef_search 40, no iterative scan), asimilarity_search_by_vector(k=10)",
                    "load": {**load, "reused_existing_database": peer_marker is not None},
                },
                "ours": "the vector query alone and retrieve.search() (vector + full text, "
                "RRF), each on the path the service's rule picks (exact when the tenant has "
                f"<= {settings.exact_search_max_chunks} chunks); peer and ours interleaved",
                "spec": spec.as_json(),
                "buckets": buckets,
            }
    finally:
        await engine.close()
    result["targets"] = peer_targets(buckets)
    print(await asyncio.to_thread(write_result, output, f"peer-{label}", result))
    return 0


def peer_targets(buckets: dict[str, Any]) -> dict[str, Any]:
    """≥ 3× faster than the peer (p50 and p95) at equal or better recall, per bucket: our vector
    search against theirs (like for like), and our whole hybrid retrieval against it."""
    found: dict[str, Any] = {}
    for what, ratio, recall in (
        ("vector", "peer_over_ours_vector", "recall_at_10"),
        ("hybrid", "peer_over_ours_hybrid", "hybrid_recall_at_10"),
    ):
        judged = {
            name: min(bucket[ratio].values()) >= 3.0
            and bucket["ours_service_rule"][recall] >= bucket["peer_vector_search"]["recall_at_10"]
            for name, bucket in buckets.items()
        }
        found[f"ours_{what}_ge_3x_faster_at_equal_or_better_recall"] = {
            **judged,
            "all": all(judged.values()),
        }
    return found
