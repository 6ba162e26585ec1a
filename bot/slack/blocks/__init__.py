"""Block Kit rendering of every message runbook-bot sends: pure functions returning ``Card``.

Untrusted text (runbooks, answers, alerts) is escaped wherever mrkdwn parses it and quoted as
literal rich text; links are built only from http(s) URLs in runbook metadata; every limit is
met by visible "…" truncation or "+N more", never by a message Slack would reject.
"""

from __future__ import annotations

from slack_sdk.models.blocks import ContextBlock

from bot.slack.blocks.answer import render_answer
from bot.slack.blocks.card import Card, build_card
from bot.slack.blocks.changes import with_source_changes
from bot.slack.blocks.notices import (
    render_internal_error,
    render_not_connected,
    render_outsider,
    render_searching,
    render_store_unavailable,
    render_timed_out,
    render_usage,
)
from bot.slack.blocks.outcomes import render_error, render_no_evidence
from bot.slack.blocks.sources import STALE_AFTER_DAYS
from bot.slack.blocks.text import clip, escape_mrkdwn, mrkdwn, one_line
from rag import AskResult

__all__ = [
    "Card",
    "escape_mrkdwn",
    "render_answer",
    "render_error",
    "render_internal_error",
    "render_no_evidence",
    "render_not_connected",
    "render_outsider",
    "render_result",
    "render_searching",
    "render_store_unavailable",
    "render_timed_out",
    "render_usage",
    "with_source_changes",
]

QUESTION_MAX = 300


def render_result(
    result: AskResult,
    *,
    expanded: frozenset[int] = frozenset(),
    ephemeral: bool = False,
    question: str | None = None,
    stale_after_days: int = STALE_AFTER_DAYS,
    section: int | None = None,
) -> Card:
    """The card for any ``ask`` outcome; ``question`` is restated on top when given, and
    ``section`` picks the runbook section an answer shows."""
    if result.status == "answered":
        card = render_answer(
            result,
            expanded=expanded,
            ephemeral=ephemeral,
            stale_after_days=stale_after_days,
            section=section,
        )
    elif result.status == "abstained":
        card = render_no_evidence(result)
    else:
        card = render_error(result)
    asked = clip(escape_mrkdwn(one_line(question)), QUESTION_MAX)
    if not asked:
        return card
    restated = ContextBlock(elements=[mrkdwn(f"*You asked:* {asked}")]).to_dict()
    # Below the header, when there is one: a header reads as the card's title.
    at = 1 if card.blocks and card.blocks[0]["type"] == "header" else 0
    return build_card(card.text, [*card.blocks[:at], restated, *card.blocks[at:]])
