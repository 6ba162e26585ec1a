"""Writing an ingest's results: a document's new version with its chunks, and retirements.

A changed document's predecessor is marked superseded in the same transaction as the new version
is written, so a concurrent reader sees the old version or the new one, never neither.
"""

from __future__ import annotations

from typing import Any

from psycopg import AsyncConnection
from psycopg.rows import TupleRow

from rag.embedding.embedder import Embedder, Vectors
from rag.formats.markdown import PARSE_REVISION
from rag.ingest.embed import PendingDocument
from rag.ingest.report import IngestReport
from rag.store.connection import Store

_SUPERSEDE_DOCUMENT = """
UPDATE documents SET superseded = true
WHERE tenant_id = %(tenant)s AND document_id = %(document_id)s AND NOT superseded
"""

_SUPERSEDE_CHUNKS = """
UPDATE chunks SET superseded = true
WHERE tenant_id = %(tenant)s AND document_id = %(document_id)s AND NOT superseded
"""

_INSERT_DOCUMENT = """
INSERT INTO documents (tenant_id, document_id, version, sha256, source_path, title, service,
                       tags, owner, url, updated, superseded, superseded_by, embedding_model,
                       parse_revision)
SELECT %(tenant)s, %(document_id)s, coalesce(max(version), 0) + 1, %(sha256)s, %(source_path)s,
       %(title)s, %(service)s, %(tags)s, %(owner)s, %(url)s, %(updated)s, %(retired)s,
       %(superseded_by)s, %(embedding_model)s, %(parse_revision)s
FROM documents WHERE tenant_id = %(tenant)s AND document_id = %(document_id)s
RETURNING version
"""

# Writers of a tenant's documents take turns, so version numbers never collide and a document
# never has two current versions. One lock per tenant, not per document: a source sync writes
# thousands of documents in one transaction, and each advisory lock it held to the commit would
# take a slot of the shared lock table (max_locks_per_transaction x max_connections, 6,400 by
# default) until "out of shared memory". Taking it again in the same transaction takes no slot.
# Every ingest and sync already holds the tenant's ingest lock (rag/ingest/guard.py), so this
# one never waits there; it keeps any other writer of the tenant in line.
_WRITE_LOCK_SPACE = 0x52554E57  # "RUNW"; two-key, apart from the ingest lock's "RUNB"

_LOCK_TENANT_WRITES = "SELECT pg_advisory_xact_lock(%(space)s, hashtext(%(tenant)s))"

# Lexemes without positions (BM25 here never reads them): every lexeme of the title, headings
# and body in `tsv`, the title's and headings' again in `heading_tsv` for the heading bonus.
_INSERT_CHUNK = """
INSERT INTO chunks (tenant_id, document_id, version, ordinal, heading_path, content, superseded,
                    service, embedding, embedding_model, embedding_dim, tsv, heading_tsv)
VALUES (%(tenant)s, %(document_id)s, %(version)s, %(ordinal)s, %(heading_path)s, %(content)s,
        %(retired)s, %(service)s, %(embedding)s, %(embedding_model)s, %(embedding_dim)s,
        strip(to_tsvector('english', %(title)s) || to_tsvector('english', %(headings)s)
              || to_tsvector('english', %(content)s)),
        strip(to_tsvector('english', %(title)s) || to_tsvector('english', %(headings)s)))
"""

_RETIRE_DOCUMENTS = """
UPDATE documents SET superseded = true
WHERE tenant_id = %(tenant)s AND NOT superseded AND document_id = ANY(%(gone)s)
RETURNING document_id
"""

_RETIRE_CHUNKS = """
UPDATE chunks SET superseded = true
WHERE tenant_id = %(tenant)s AND NOT superseded AND document_id = ANY(%(gone)s)
"""


async def ensure_tenant(store: Store, tenant: str) -> None:
    async with store.pool.connection() as conn:
        await conn.execute(
            "INSERT INTO tenants (tenant_id) VALUES (%s) ON CONFLICT DO NOTHING", (tenant,)
        )


async def write_version(
    store: Store,
    embedder: Embedder,
    document: PendingDocument,
    vectors: Vectors,
    report: IngestReport,
) -> None:
    async with store.pool.connection() as conn, conn.transaction():
        await write_version_on(conn, embedder, document, vectors, report)


async def write_version_on(
    conn: AsyncConnection[TupleRow],
    embedder: Embedder,
    document: PendingDocument,
    vectors: Vectors,
    report: IngestReport,
) -> None:
    """``write_version`` inside the caller's transaction (a source sync publishes in one)."""
    source = document.source
    meta = source.runbook.frontmatter
    retired = meta.superseded_by is not None
    params: dict[str, Any] = {
        "tenant": document.tenant,
        "document_id": source.document_id,
        "sha256": source.sha256,
        "source_path": source.relative_path,
        "title": source.runbook.title,
        "service": meta.service,
        "tags": list(meta.tags),
        "owner": meta.owner,
        "url": meta.url,
        "updated": meta.updated,
        "retired": retired,
        "superseded_by": meta.superseded_by,
        "embedding_model": embedder.model_id,
        "parse_revision": PARSE_REVISION,
    }
    await conn.execute(_LOCK_TENANT_WRITES, {"space": _WRITE_LOCK_SPACE, "tenant": document.tenant})
    replaced = await conn.execute(_SUPERSEDE_DOCUMENT, params)
    await conn.execute(_SUPERSEDE_CHUNKS, params)
    cur = await conn.execute(_INSERT_DOCUMENT, params)
    row = await cur.fetchone()
    assert row is not None
    version = row[0]
    chunk_rows = [
        {
            **params,
            "version": version,
            "ordinal": ordinal,
            "heading_path": list(heading_path),
            "headings": " ".join(heading_path),
            "content": content,
            "embedding": vector,
            "embedding_dim": embedder.dim,
        }
        for ordinal, ((heading_path, content), vector) in enumerate(
            zip(document.chunk_contents, vectors, strict=True)
        )
    ]
    async with conn.cursor() as cursor:
        await cursor.executemany(_INSERT_CHUNK, chunk_rows)
    report.chunks_written += len(document.chunk_contents)
    report.superseded += replaced.rowcount
    if retired:
        report.superseded += 1
    elif document.is_new:
        report.added += 1
    else:
        report.changed += 1


async def retire_documents(store: Store, tenant: str, document_ids: list[str]) -> int:
    """Retire these current documents and their chunks; return how many were retired."""
    if not document_ids:
        return 0
    async with store.pool.connection() as conn, conn.transaction():
        return await retire_documents_on(conn, tenant, document_ids)


async def retire_documents_on(
    conn: AsyncConnection[TupleRow], tenant: str, document_ids: list[str]
) -> int:
    """``retire_documents`` inside the caller's transaction."""
    cur = await conn.execute(_RETIRE_DOCUMENTS, {"tenant": tenant, "gone": document_ids})
    gone = [row[0] for row in await cur.fetchall()]
    await conn.execute(_RETIRE_CHUNKS, {"tenant": tenant, "gone": gone})
    return len(gone)
