"""Bring a document stored by an older parser up to date without embedding it again.

A document whose bytes and embedding model are unchanged but whose ``parse_revision`` is older
than ``rag.formats.markdown.PARSE_REVISION`` is parsed again. When its chunks come out with the same
text in the same order, only their heading paths are rewritten, in place: the embedded text
(title and breadcrumb, deduplicated, ``rag.ingest.embed.embed_text``) and the lexemes (title and
headings are both in ``tsv`` and ``heading_tsv``) are the same under every revision so far, so
the vectors and the term statistics stay valid. When the text differs (say the chunk size
setting changed since), the caller ingests the document as changed instead.
"""

from __future__ import annotations

from rag.formats.markdown import PARSE_REVISION
from rag.ingest.chunking import chunk_runbook
from rag.ingest.files import SourceFile
from rag.ingest.report import IngestLimits
from rag.store.connection import Store

_STORED_CHUNKS = """
SELECT ordinal, heading_path, content FROM chunks
WHERE tenant_id = %(tenant)s AND document_id = %(document_id)s AND version = %(version)s
ORDER BY ordinal
"""

_SET_HEADING_PATH = """
UPDATE chunks SET heading_path = %(heading_path)s
WHERE tenant_id = %(tenant)s AND document_id = %(document_id)s AND version = %(version)s
  AND ordinal = %(ordinal)s
"""

_SET_REVISION = """
UPDATE documents SET parse_revision = %(revision)s
WHERE tenant_id = %(tenant)s AND document_id = %(document_id)s AND version = %(version)s
"""


async def relabel_document(
    store: Store, tenant: str, source: SourceFile, version: int, limits: IngestLimits
) -> bool:
    """Rewrite the heading paths of the stored ``version`` to the current parser's; False (and
    nothing written) when its chunks' text is not what the current parser cuts."""
    drafts = chunk_runbook(
        source.runbook, max_chars=limits.chunk_max_chars, overlap_chars=limits.chunk_overlap_chars
    )
    params = {"tenant": tenant, "document_id": source.document_id, "version": version}
    async with store.pool.connection() as conn, conn.transaction():
        cur = await conn.execute(_STORED_CHUNKS, params)
        stored = await cur.fetchall()
        if [row[2] for row in stored] != [draft.content for draft in drafts]:
            return False
        moved = [
            {**params, "ordinal": ordinal, "heading_path": list(draft.heading_path)}
            for (ordinal, heading_path, _), draft in zip(stored, drafts, strict=True)
            if tuple(heading_path) != draft.heading_path
        ]
        if moved:
            async with conn.cursor() as cursor:
                await cursor.executemany(_SET_HEADING_PATH, moved)
        await conn.execute(_SET_REVISION, {**params, "revision": PARSE_REVISION})
    return True
