"""What the gap report reads for one tenant: answer facts, votes, current runbooks, owners.

Only text-free tables are required; a question's text joins in while it is retained.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from psycopg.rows import class_row

from bot.core.gaps.labels import group_terms
from bot.core.gaps.rows import DocumentRow, FactRow, VoteRow
from bot.core.gaps.thread_drafts import DRAFTS, ThreadDraft
from rag import Store


@dataclass(frozen=True)
class GapInputs:
    facts: list[FactRow]
    votes: list[VoteRow]
    documents: dict[str, DocumentRow]
    # `runbook owner map` names (lower case) → chat target; '' → the tenant default.
    owner_targets: dict[str, str] = field(default_factory=dict)
    # How many of the tenant's current chunks use each question term, and how many there are.
    term_df: dict[str, int] = field(default_factory=dict)
    chunks: int = 0
    # Runbooks drafted from incident threads and delivered for review (issue 40).
    drafts: list[ThreadDraft] = field(default_factory=list)


_FACTS = """
SELECT f.answer_id::text AS answer_id, f.created_at, f.status, f.topics, f.documents,
       f.versions, a.question, f.service, f.question_embedding::real[] AS embedding,
       f.embedding_model, f.cosines::float8[] AS cosines,
       COALESCE(a.thread_ts IS NOT NULL AND NOT a.ephemeral AND a.conversation_id IS NULL,
                false) AS in_thread
FROM answer_facts AS f
LEFT JOIN answers AS a ON a.tenant_id = f.tenant_id AND a.answer_id = f.answer_id
WHERE f.tenant_id = %(tenant)s AND f.created_at >= %(since)s
ORDER BY f.created_at, f.answer_id
"""

# A vote counts against (or for) the runbook the answer opened with: its first citation. A vote
# whose answer fact is gone falls back to the runbooks the reason named.
_VOTES = """
SELECT v.answer_id::text AS answer_id, v.value, v.reason,
       coalesce(nullif(f.documents[1:1], '{}'), v.documents[1:1], '{}') AS documents
FROM feedback AS v
LEFT JOIN answer_facts AS f ON f.tenant_id = v.tenant_id AND f.answer_id = v.answer_id
WHERE v.tenant_id = %(tenant)s AND v.at >= %(since)s
"""

_DOCUMENTS = """
SELECT document_id, version, title, url, owner, updated, service
FROM documents WHERE tenant_id = %(tenant)s AND NOT superseded
"""


_OWNER_TARGETS = """
SELECT lower(name), target FROM owner_targets WHERE tenant_id = %(tenant)s
"""

# Question terms matched to the tenant's lexemes the way chunks are indexed (english stemmer).
_TERM_DF = """
SELECT t.term, coalesce(max(s.df), 0)
FROM unnest(%(terms)s::text[]) AS t(term)
LEFT JOIN term_stats AS s
  ON s.tenant_id = %(tenant)s AND s.df > 0
 AND s.lexeme = ANY (tsvector_to_array(to_tsvector('english', t.term)))
GROUP BY t.term
"""

_CHUNKS = "SELECT chunks FROM tenant_text_stats WHERE tenant_id = %(tenant)s"


async def load_gap_inputs(store: Store, tenant: str, *, since: datetime) -> GapInputs:
    params: dict[str, Any] = {"tenant": tenant, "since": since}
    async with store.pool.connection() as conn:
        facts = await conn.cursor(row_factory=class_row(FactRow)).execute(_FACTS, params)
        fact_rows = await facts.fetchall()
        votes = await conn.cursor(row_factory=class_row(VoteRow)).execute(_VOTES, params)
        vote_rows = await votes.fetchall()
        docs = await conn.cursor(row_factory=class_row(DocumentRow)).execute(_DOCUMENTS, params)
        document_rows = await docs.fetchall()
        targets = await (await conn.execute(_OWNER_TARGETS, params)).fetchall()
        terms = sorted(group_terms([f.topics for f in fact_rows]))
        df_rows = await (await conn.execute(_TERM_DF, {**params, "terms": terms})).fetchall()
        chunk_row = await (await conn.execute(_CHUNKS, params)).fetchone()
        drafts = await conn.cursor(row_factory=class_row(ThreadDraft)).execute(DRAFTS, params)
        draft_rows = await drafts.fetchall()
    return GapInputs(
        fact_rows,
        vote_rows,
        {d.document_id: d for d in document_rows},
        owner_targets={str(name): str(target) for name, target in targets},
        term_df={str(term): int(df) for term, df in df_rows},
        chunks=int(chunk_row[0]) if chunk_row else 0,
        drafts=draft_rows,
    )
