"""The "Write the runbook" button: on a "No runbook evidence" card, or on an answer that got 👎,
once people have worked the incident in its thread (issue 40). It opens the review modal of
"Draft a runbook from this thread" for that thread; it carries only the answer id."""

from __future__ import annotations

from typing import Any

from slack_sdk.models.blocks import ActionsBlock, ContextBlock

from bot.slack.blocks.card import MAX_BLOCKS, Card, build_card, button
from bot.slack.blocks.text import mrkdwn

WRITE_RUNBOOK = "write_runbook"
OFFER_BLOCK = "draft_offer"
OFFER_NOTE = (
    "The fix was worked out in this thread: draft a runbook from it, reviewed before it goes out."
)


def has_draft_offer(blocks: list[dict[str, Any]]) -> bool:
    return any(block.get("block_id") == OFFER_BLOCK for block in blocks)


def with_draft_offer(card: Card, answer_id: str) -> Card:
    """The card with the button at its end (once; a full card is left as it is)."""
    if has_draft_offer(card.blocks) or len(card.blocks) + 2 > MAX_BLOCKS:
        return card
    offer = [
        ContextBlock(elements=[mrkdwn(OFFER_NOTE)]).to_dict(),
        ActionsBlock(
            block_id=OFFER_BLOCK,
            elements=[button("Write the runbook", WRITE_RUNBOOK, answer_id, primary=True)],
        ).to_dict(),
    ]
    return build_card(card.text, [*card.blocks, *offer])


def kept_draft_offer(clicked: dict[str, Any], card: Card) -> Card:
    """A redraw of a clicked card keeps the button the card showed (``clicked``: the
    interaction's ``message``)."""
    blocks = clicked.get("blocks") if isinstance(clicked, dict) else None
    if not isinstance(blocks, list) or not has_draft_offer(blocks):
        return card
    offer = next(b for b in blocks if b.get("block_id") == OFFER_BLOCK)
    value = str(((offer.get("elements") or [{}])[0]).get("value") or "")
    return with_draft_offer(card, value) if value else card
