"""The text-free record of every answer and abstention: status, topics, runbooks, versions, and
the question's embedding (what the gap report groups by).

Written next to the answer itself; unlike it, it is kept after ``RUNBOOK_RETAIN_TEXT_DAYS``,
so the gap report and the per-runbook counts work on what retention leaves.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from typing import Any

import numpy as np

from bot.core.answers.topics import question_topics
from bot.core.statements import Statement, send_together
from rag import AskResult, Evidence, Store

NEAREST_DOCUMENTS = 3

_INSERT = """
INSERT INTO answer_facts (tenant_id, answer_id, status, service, topics, documents, versions,
                          question_embedding, embedding_model, cosines)
VALUES (%(tenant)s, %(answer_id)s, %(status)s, %(service)s, %(topics)s, %(documents)s,
        %(versions)s, %(embedding)s, %(embedding_model)s, %(cosines)s)
ON CONFLICT (tenant_id, answer_id) DO NOTHING
"""


def fact_documents(result: AskResult) -> list[Evidence]:
    """The runbooks an outcome points at: those cited, else the nearest few, one per document."""
    if result.status == "answered" and result.citations:
        ranked: Iterable[Evidence] = (
            c.evidence for c in sorted(result.citations, key=lambda c: c.n)
        )
        limit = len(result.citations)
    else:
        ranked, limit = result.evidence, NEAREST_DOCUMENTS
    seen: dict[str, Evidence] = {}
    for evidence in ranked:
        seen.setdefault(evidence.document_id, evidence)
        if len(seen) == limit:
            break
    return list(seen.values())


def _vector(values: tuple[float, ...] | None) -> np.ndarray[Any, np.dtype[np.float32]] | None:
    return None if values is None else np.asarray(values, dtype=np.float32)


def facts_row(
    result: AskResult,
    answer_id: str,
    *,
    question: str,
    service: str | None,
    known_services: Iterable[str],
    embedding_model: str | None = None,
) -> Statement | None:
    """The statement that records one outcome's facts; None for errors (they say nothing about
    the runbooks)."""
    if result.status not in ("answered", "abstained"):
        return None
    documents = fact_documents(result)
    params = {
        "tenant": result.tenant,
        "answer_id": uuid.UUID(answer_id),
        "status": result.status,
        "service": service,
        "topics": list(question_topics(question, known_services=known_services, service=service)),
        "documents": [e.document_id for e in documents],
        "versions": [e.version for e in documents],
        "embedding": _vector(result.question_vector),
        "embedding_model": embedding_model if result.question_vector is not None else None,
        "cosines": [round(e.cosine, 4) for e in documents],
    }
    return Statement(_INSERT, params)


async def record_answer_facts(
    store: Store,
    result: AskResult,
    answer_id: str,
    *,
    question: str,
    service: str | None,
    known_services: Iterable[str],
    embedding_model: str | None = None,
) -> None:
    statement = facts_row(
        result,
        answer_id,
        question=question,
        service=service,
        known_services=known_services,
        embedding_model=embedding_model,
    )
    if statement is not None:
        await send_together(store, [statement])
