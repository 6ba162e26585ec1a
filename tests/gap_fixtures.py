"""Planting answers and abstentions the way the bot stores them (answer row + answer facts)."""

from __future__ import annotations

from collections.abc import Sequence

from bot.core.answers.facts import record_answer_facts
from bot.core.answers.store import AnswerStore, Placement
from rag import AskResult, Citation, Embedder, Evidence, Store

PLACEMENT = Placement(
    entry="mention",
    team_id="T_GAPS",
    enterprise_id="",
    channel_id="C_GAPS",
    thread_ts=None,
    ephemeral=False,
)


def evidence(
    document_id: str,
    version: int = 1,
    *,
    updated: str | None = None,
    cosine: float = 0.5,
) -> Evidence:
    return Evidence(
        chunk_id=1,
        document_id=document_id,
        version=version,
        title=document_id.rsplit("/", 1)[-1].replace("-", " ").title(),
        heading_path=("Diagnosis",),
        content="Check the thing, then restart it.",
        url=None,
        owner=None,
        updated=updated,
        service=None,
        cosine=cosine,
        vector_rank=1,
        keyword_rank=1,
        score=0.03,
    )


async def plant(
    store: Store,
    tenant: str,
    question: str,
    *,
    answered: bool = False,
    documents: Sequence[Evidence] = (),
    known_services: Sequence[str] = (),
    embedder: Embedder | None = None,
    service: str | None = None,
) -> str:
    """Store one outcome exactly as ``Conversation.ask`` does; returns its answer id. With an
    embedder, the question's vector is the real model's, as ``RagService.ask`` makes it."""
    vector = None
    if embedder is not None:
        vector = tuple(float(x) for x in (await embedder.embed([question]))[0])
    citations = tuple(
        Citation(n=n, quote="Check the thing.", evidence=e) for n, e in enumerate(documents, 1)
    )
    result = AskResult(
        status="answered" if answered else "abstained",
        reason_code=None if answered else "no_evidence",
        answer="Check the thing. [1]" if answered else "",
        citations=citations if answered else (),
        evidence=tuple(documents),
        provider="extractive",
        timings_ms={},
        tenant=tenant,
        question_vector=vector,
    )
    answers = AnswerStore(store)
    answer_id = await answers.save(result, question=question, service=service, placement=PLACEMENT)
    await record_answer_facts(
        store,
        result,
        answer_id,
        question=question,
        service=service,
        known_services=known_services,
        embedding_model=embedder.model_id if embedder is not None else None,
    )
    return answer_id
