"""The peer of ``runbook bench peer``: langchain-postgres imported at run time, and its table
loaded the way its quickstart does (``aadd_embeddings``, then ``aapply_vector_index``).

langchain-postgres 0.0.19 has no batch insert: ``aadd_embeddings`` sends one INSERT and one
COMMIT per row. The load therefore runs several ``aadd_embeddings`` calls at once, and the peer's
database commits asynchronously while loading (``synchronous_commit = off``, reset afterwards):
the rows and the index are the same, only the wait for each commit's WAL flush is gone.
"""

from __future__ import annotations

import asyncio
import importlib
import time
import uuid
from typing import Any

import psycopg
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict

from bench.synthetic import SyntheticCorpus
from rag import ConfigurationError

TABLE = "runbook_chunks"
_ID_NAMESPACE = uuid.UUID("5b0d1f55-7a2e-4c55-9a57-3d9c4e0c1a11")
_BATCH = 1_000
_CONCURRENT_CALLS = 4


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


def peer_modules() -> dict[str, Any]:
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


def sqlalchemy_url(modules: dict[str, Any], conninfo: str) -> Any:
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


async def open_peer(modules: dict[str, Any], engine: Any) -> Any:
    return await modules["lc"].PGVectorStore.create(
        engine=engine,
        table_name=TABLE,
        embedding_service=PrecomputedEmbeddings({}),
        metadata_columns=["tenant"],
    )


async def load_peer(
    modules: dict[str, Any], engine: Any, corpus: SyntheticCorpus, *, base_url: str, database: str
) -> Any:
    """The quickstart's steps: create the table, add the embeddings, apply the HNSW index.

    ``engine`` must not have connected yet: its connections take the database's settings.
    """
    await _set_synchronous_commit(base_url, database, off=True)
    try:
        return await _load(modules, engine, corpus)
    finally:
        await _set_synchronous_commit(base_url, database, off=False)


async def _set_synchronous_commit(base_url: str, database: str, *, off: bool) -> None:
    statement = (
        "ALTER DATABASE {} SET synchronous_commit = off"
        if off
        else ("ALTER DATABASE {} RESET synchronous_commit")
    )
    async with await psycopg.AsyncConnection.connect(base_url, autocommit=True) as conn:
        await conn.execute(sql.SQL(statement).format(sql.Identifier(database)))


async def _load(modules: dict[str, Any], engine: Any, corpus: SyntheticCorpus) -> Any:
    timings: dict[str, float] = {}
    await engine.ainit_vectorstore_table(
        table_name=TABLE,
        vector_size=corpus.spec.dim,
        metadata_columns=[modules["lc"].Column("tenant", "TEXT")],
        overwrite_existing=True,
    )
    store = await open_peer(modules, engine)
    ranks: asyncio.Queue[int] = asyncio.Queue()
    for rank in range(corpus.spec.tenants):
        ranks.put_nowait(rank)

    async def add_tenants() -> None:
        while not ranks.empty():
            rows = await asyncio.to_thread(corpus.tenant_rows, ranks.get_nowait())
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

    started = time.perf_counter()
    await asyncio.gather(*(add_tenants() for _ in range(_CONCURRENT_CALLS)))
    timings["add_embeddings_seconds"] = time.perf_counter() - started
    started = time.perf_counter()
    await store.aapply_vector_index(modules["indexes"].HNSWIndex())
    timings["hnsw_build_seconds"] = time.perf_counter() - started
    return {
        **{name: round(value, 2) for name, value in timings.items()},
        "add_embeddings_calls_at_once": _CONCURRENT_CALLS,
        "synchronous_commit_while_loading": "off",
    }
