"""What every Slack entry point shares: the core plus delivery, and rendering a card."""

from __future__ import annotations

from dataclasses import dataclass

from bot.core.answers_store import StoredAnswer
from bot.core.conversation import Conversation
from bot.slack.blocks import Card, render_result
from bot.slack.blocks.card import interaction_id
from bot.slack.blocks.incident import add_stop_following, mark_automatic
from bot.slack.delivery import Delivery
from bot.slack.tenancy import Origin
from rag import AskResult


@dataclass(frozen=True)
class Bot(Conversation):
    """The Slack app's collaborators, handed to every listener: the shared core plus delivery."""

    delivery: Delivery

    async def scope_for(
        self, tenant: str, origin: Origin, hints: tuple[str, ...] = ()
    ) -> str | None:
        return await self.scope(
            tenant, workspace_id=origin.team_id, channel_id=origin.channel_id, hints=hints
        )


def render(
    result: AskResult,
    *,
    entry: str,
    question: str,
    ephemeral: bool,
    expanded: frozenset[int] = frozenset(),
) -> Card:
    # A mention's (or alert's, follow-up's, DM's) question sits right above its answer;
    # elsewhere the card restates it.
    shown = question if entry in ("command", "shortcut") else None
    card = render_result(result, expanded=expanded, ephemeral=ephemeral, question=shown)
    if entry == "alert":
        return mark_automatic(card, interaction_id(result))
    if entry == "follow_up":
        return add_stop_following(card, interaction_id(result))
    return card


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
