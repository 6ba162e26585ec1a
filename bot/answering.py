"""What every entry point shares: the collaborators, asking and storing, and rendering a card."""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass

from bot.answers_store import AnswerStore, Placement, StoredAnswer
from bot.blocks import Card, render_result
from bot.delivery import Delivery
from bot.metrics import BotMetrics
from bot.tasks import BackgroundTasks
from bot.tenancy import Origin, channel_scope
from rag import AskResult, RagService, Settings, Store

# Postgres text cannot hold NUL, and UTF-8 cannot encode a lone surrogate (JSON may carry one
# escaped, as ``\ud800``): either would fail the answer's INSERT and cost the asker their card.
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


@dataclass(frozen=True)
class Bot:
    """The Slack app's collaborators, handed to every listener."""

    settings: Settings
    service: RagService
    store: Store
    answers: AnswerStore
    delivery: Delivery
    metrics: BotMetrics
    tasks: BackgroundTasks
    # Much of the pipeline is CPU work on the event loop (answering, verifying, rendering):
    # a bounded number at a time keeps acks (and /healthz) well inside Slack's 3 s under a burst
    # of questions, and keeps asks from queueing on the connection pool until it times out.
    answer_slots: asyncio.Semaphore

    async def ask(
        self, tenant: str, question: str, *, service: str | None, placement: Placement
    ) -> AskResult:
        """Run the pipeline and store the result under its answer id (what buttons carry)."""
        question = storable(question)
        async with self.answer_slots:
            result = await self.service.ask(tenant, question, service=service)
        await self.answers.save(result, question=question, service=service, placement=placement)
        return result

    async def scope(self, tenant: str, origin: Origin, hints: tuple[str, ...] = ()) -> str | None:
        """An alert's own service label wins when the tenant has runbooks for it; else the
        channel's mapped service, if any."""
        if hints:
            known = {
                s.lower(): s for s in (await self.service.catalogs.catalog_for(tenant)).services
            }
            for hint in hints:
                if hint.lower() in known:
                    return known[hint.lower()]
        return await channel_scope(self.store, tenant, origin)


def storable(text: str) -> str:
    """User-typed text with the characters Postgres cannot store replaced by spaces."""
    return _UNSTORABLE.sub(" ", text)


def render(
    result: AskResult,
    *,
    entry: str,
    question: str,
    ephemeral: bool,
    expanded: frozenset[int] = frozenset(),
) -> Card:
    # A mention's question sits right above its answer; elsewhere the card restates it.
    shown = None if entry == "mention" else question
    return render_result(result, expanded=expanded, ephemeral=ephemeral, question=shown)


def render_stored(
    stored: StoredAnswer, *, ephemeral: bool, expanded: frozenset[int] | None = None
) -> Card:
    return render(
        stored.result,
        entry=stored.placement.entry,
        question=stored.question,
        ephemeral=ephemeral,
        expanded=stored.expanded if expanded is None else expanded,
    )
