"""What every Slack entry point shares: the core plus delivery and the queue, and rendering."""

from __future__ import annotations

from dataclasses import dataclass

from bot.core.answers.store import StoredAnswer
from bot.core.conversation import Conversation
from bot.core.dedupe import EventDeduper
from bot.core.jobs.queue import JobQueue
from bot.core.jobs.worker import JobHandlers
from bot.slack.blocks import Card, render_result, with_source_changes
from bot.slack.blocks.card import interaction_id
from bot.slack.blocks.incident import add_stop_following, mark_automatic
from bot.slack.delivery.clients import SlackClients
from bot.slack.delivery.posts import Delivery
from bot.slack.tenancy import Origin
from rag import AskResult


@dataclass(frozen=True)
class Bot(Conversation):
    """The Slack app's collaborators, handed to every listener: the shared core, delivery, and
    the queue (intake claims work; handlers registered per job kind do it)."""

    delivery: Delivery
    intake: EventDeduper
    jobs: JobQueue
    job_handlers: JobHandlers
    clients: SlackClients

    async def scope_for(
        self, tenant: str, origin: Origin, hints: tuple[str, ...] = ()
    ) -> str | None:
        return await self.scope(
            tenant, workspace_id=origin.team_id, channel_id=origin.channel_id, hints=hints
        )

    def card(
        self,
        result: AskResult,
        *,
        entry: str,
        question: str,
        ephemeral: bool,
        expanded: frozenset[int] = frozenset(),
    ) -> Card:
        """``render`` with this deployment's staleness threshold."""
        return render(
            result,
            entry=entry,
            question=question,
            ephemeral=ephemeral,
            stale_after_days=self.settings.stale_after_days,
            expanded=expanded,
        )

    def stored_card(
        self,
        stored: StoredAnswer,
        *,
        ephemeral: bool,
        expanded: frozenset[int] | None = None,
        section: int | None = None,
    ) -> Card:
        """``render_stored`` with this deployment's staleness threshold."""
        return render_stored(
            stored,
            ephemeral=ephemeral,
            stale_after_days=self.settings.stale_after_days,
            expanded=expanded,
            section=section,
        )


def render(
    result: AskResult,
    *,
    entry: str,
    question: str,
    ephemeral: bool,
    stale_after_days: int,
    expanded: frozenset[int] = frozenset(),
    section: int | None = None,
) -> Card:
    # A mention's (or alert's, follow-up's, DM's) question sits right above its answer;
    # elsewhere the card restates it.
    shown = question if entry in ("command", "shortcut") else None
    card = render_result(
        result,
        expanded=expanded,
        ephemeral=ephemeral,
        question=shown,
        stale_after_days=stale_after_days,
        section=section,
    )
    if entry == "alert":
        return mark_automatic(card, interaction_id(result))
    if entry == "follow_up":
        return add_stop_following(card, interaction_id(result))
    return card


def render_stored(
    stored: StoredAnswer,
    *,
    ephemeral: bool,
    stale_after_days: int,
    expanded: frozenset[int] | None = None,
    section: int | None = None,
) -> Card:
    """A stored answer redrawn from the runbooks as they are now, noting what changed; its
    runbook section is ``section``, else the one last shown."""
    card = render(
        stored.result,
        entry=stored.placement.entry,
        question=stored.question,
        ephemeral=ephemeral,
        stale_after_days=stale_after_days,
        expanded=stored.expanded if expanded is None else expanded,
        section=stored.section if section is None else section,
    )
    return with_source_changes(card, stored.changes)
