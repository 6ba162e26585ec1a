"""A redrawn card's note on its sources: runbooks updated, pruned or deleted since the answer."""

from __future__ import annotations

from collections.abc import Sequence

from slack_sdk.models.blocks import ContextBlock

from bot.core.answers.result_codec import SourceChange
from bot.slack.blocks.card import MAX_BLOCKS, Card, build_card
from bot.slack.blocks.text import mrkdwn

_WHAT = {
    "updated": "its runbook was updated since this answer",
    "removed": "its runbook was removed since this answer",
    "gone": "no longer available, so not shown",
}


def source_changes_note(changes: Sequence[SourceChange]) -> str:
    """One clause per kind of change, naming the citation numbers it concerns."""
    parts = []
    for change, what in _WHAT.items():
        numbers = [f"[{c.n}]" for c in changes if c.change == change]
        if numbers:
            parts.append(f"source {', '.join(numbers)}: {what}")
    sentence = "; ".join(parts).capitalize()
    return f":warning: {sentence}. Ask again for an answer from the current runbooks."


def with_source_changes(card: Card, changes: Sequence[SourceChange]) -> Card:
    """``card`` with the note above its last block (the footer), when anything changed."""
    if not changes or len(card.blocks) >= MAX_BLOCKS:
        return card
    note = ContextBlock(elements=[mrkdwn(source_changes_note(changes))]).to_dict()
    at = max(len(card.blocks) - 1, 0)
    return build_card(card.text, [*card.blocks[:at], note, *card.blocks[at:]])
