"""What the gap report reads for one tenant: answer facts, votes and current runbooks.

Only text-free tables are required; a question's text joins in while it is retained.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from psycopg.rows import class_row

from rag import Store


@dataclass(frozen=True)
class FactRow:
    answer_id: str
    created_at: datetime
    status: str
    topics: list[str]
    documents: list[str]
    versions: list[int]
    question: str | None  # None once retention has removed the answer


@dataclass(frozen=True)
class VoteRow:
    answer_id: str
    value: str
    reason: str | None
    documents: list[str]


@dataclass(frozen=True)
class DocumentRow:
    document_id: str
    version: int
    title: str
    url: str | None
    owner: str | None
    updated: str | None


@dataclass(frozen=True)
class GapInputs:
    facts: list[FactRow]
    votes: list[VoteRow]
    documents: dict[str, DocumentRow]


_FACTS = """
SELECT f.answer_id::text AS answer_id, f.created_at, f.status, f.topics, f.documents,
       f.versions, a.question
FROM answer_facts AS f
LEFT JOIN answers AS a ON a.tenant_id = f.tenant_id AND a.answer_id = f.answer_id
WHERE f.tenant_id = %(tenant)s AND f.created_at >= %(since)s
ORDER BY f.created_at, f.answer_id
"""

# A 👎 with a reason names its runbooks itself; other votes take the answer's cited runbooks.
_VOTES = """
SELECT v.answer_id::text AS answer_id, v.value, v.reason,
       coalesce(nullif(v.documents, '{}'), f.documents, '{}') AS documents
FROM feedback AS v
LEFT JOIN answer_facts AS f ON f.tenant_id = v.tenant_id AND f.answer_id = v.answer_id
WHERE v.tenant_id = %(tenant)s AND v.at >= %(since)s
"""

_DOCUMENTS = """
SELECT document_id, version, title, url, owner, updated
FROM documents WHERE tenant_id = %(tenant)s AND NOT superseded
"""


async def load_gap_inputs(store: Store, tenant: str, *, since: datetime) -> GapInputs:
    params = {"tenant": tenant, "since": since}
    async with store.pool.connection() as conn:
        facts = await conn.cursor(row_factory=class_row(FactRow)).execute(_FACTS, params)
        fact_rows = await facts.fetchall()
        votes = await conn.cursor(row_factory=class_row(VoteRow)).execute(_VOTES, params)
        vote_rows = await votes.fetchall()
        docs = await conn.cursor(row_factory=class_row(DocumentRow)).execute(_DOCUMENTS, params)
        document_rows = await docs.fetchall()
    return GapInputs(fact_rows, vote_rows, {d.document_id: d for d in document_rows})
