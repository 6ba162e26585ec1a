"""The conversation flow every surface shares: ask inside a tenant, store the answer, scope it.

A surface (Slack, Teams) resolves the tenant from its verified payload, then calls
``Conversation.ask``; rendering and delivery stay in the surface's own package.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from psycopg.rows import TupleRow

from bot.core.answers.facts import facts_row
from bot.core.answers.store import AnswerStore, Placement, answer_row
from bot.core.metrics import BotMetrics
from bot.core.statements import Statement, send_together
from bot.core.tasks import BackgroundTasks
from rag import AskResult, RagService, Settings, Store, StoreError, channel_service

# Postgres text cannot hold NUL, and UTF-8 cannot encode a lone surrogate (JSON may carry one
# escaped, as ``\ud800``): either would fail the answer's INSERT and cost the asker their card.
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


@dataclass(frozen=True)
class Conversation:
    """The collaborators every entry point of every surface shares."""

    settings: Settings
    # None in a web process (``runbook serve --role web``), which queues work and answers none
    # of it: it never loads the embedding model.
    service: RagService | None
    store: Store
    answers: AnswerStore
    metrics: BotMetrics
    tasks: BackgroundTasks
    # Much of the pipeline is CPU work on the event loop (answering, verifying, rendering):
    # a bounded number at a time keeps acks (and /healthz) well inside the platforms' deadlines
    # under a burst of questions, and keeps asks from queueing on the connection pool.
    answer_slots: asyncio.Semaphore

    @property
    def rag(self) -> RagService:
        """The answer pipeline; only a process that runs jobs has one."""
        if self.service is None:
            raise RuntimeError("a web process answers nothing: its work runs in worker processes")
        return self.service

    async def ask(
        self,
        tenant: str,
        question: str,
        *,
        service: str | None,
        placement: Placement,
        keep_unanswered: bool = True,
    ) -> AskResult:
        """Run the pipeline and store the result under its answer id (what buttons carry).
        ``keep_unanswered=False``: an abstention (or error) is stored nowhere, for an entry
        that stays silent unless it answers (a thread follow-up)."""
        result, _ = await self.ask_with(
            tenant, question, service=service, placement=placement, keep_unanswered=keep_unanswered
        )
        return result

    async def ask_with(
        self,
        tenant: str,
        question: str,
        *,
        service: str | None,
        placement: Placement,
        keep_unanswered: bool = True,
        also: Callable[[str], Sequence[Statement]] | None = None,
    ) -> tuple[AskResult, list[TupleRow | None]]:
        """``ask``, with ``also(answer_id)``'s statements stored with the answer (in its
        transaction and round trip); returns their first rows (none when nothing was stored)."""
        question = storable(question)
        async with self.answer_slots:
            result = await self.rag.ask(
                tenant, question, service=service, trace_unanswered=keep_unanswered
            )
        if result.status == "error" and result.reason_code == StoreError.code:
            # The database, not the question: the job waits for it and asks again, rather
            # than store and show an error (or anything else) for a question never searched.
            raise StoreError("the database did not answer the search")
        if not keep_unanswered and result.status != "answered":
            return result, []
        catalog = await self.rag.catalogs.catalog_for(tenant)
        answer_id, row = answer_row(result, question=question, service=service, placement=placement)
        facts = facts_row(
            result,
            answer_id,
            question=question,
            service=service,
            known_services=catalog.services,
            embedding_model=self.rag.embedder.model_id,
        )
        extra = list(also(answer_id)) if also is not None else []
        # The answer, its facts and what the caller adds: one round trip, all or none.
        rows = await send_together(self.store, [row, *([facts] if facts else []), *extra])
        return result, rows[-len(extra) :] if extra else []

    async def scope(
        self,
        tenant: str,
        *,
        workspace_id: str | None,
        channel_id: str | None,
        hints: tuple[str, ...] = (),
    ) -> str | None:
        """An alert's own service label wins when the tenant has runbooks for it; else the
        channel's mapped service (``runbook channel map``), if any."""
        if hints:
            known = {s.lower(): s for s in (await self.rag.catalogs.catalog_for(tenant)).services}
            for hint in hints:
                if hint.lower() in known:
                    return known[hint.lower()]
        if workspace_id is None or channel_id is None:
            return None
        return await channel_service(self.store, tenant, workspace_id, channel_id)


def storable(text: str) -> str:
    """User-typed text with the characters Postgres cannot store replaced by spaces."""
    return _UNSTORABLE.sub(" ", text)
