"""Adaptive Card 1.5 rendering of every message runbook-bot sends in Teams: pure functions.

Untrusted text is shown only through ``TextRun`` (verbatim), with ``<at>`` tags removed; links
only from http(s) URLs in runbook metadata; every card fits the activity size limit, shrunk with
visible "…" truncation rather than rejected.
"""

from __future__ import annotations

from bot.teams.cards.answer import render_answer
from bot.teams.cards.dialog import QUESTION_INPUT, render_question_dialog
from bot.teams.cards.elements import (
    ADAPTIVE_CARD,
    MAX_ACTIVITY_BYTES,
    Json,
    attachment,
    card_bytes,
    neutral,
)
from bot.teams.cards.feedback_form import (
    COMMENT_INPUT,
    PICK_A_REASON,
    REASON_INPUT,
    REASON_VERB,
)
from bot.teams.cards.notices import (
    render_answer_gone,
    render_help,
    render_internal_error,
    render_not_connected,
    render_searching,
    render_store_unavailable,
    render_timed_out,
)
from bot.teams.cards.outcomes import render_error, render_no_evidence
from rag import AskResult

__all__ = [
    "ADAPTIVE_CARD",
    "COMMENT_INPUT",
    "MAX_ACTIVITY_BYTES",
    "PICK_A_REASON",
    "QUESTION_INPUT",
    "REASON_INPUT",
    "REASON_VERB",
    "Json",
    "attachment",
    "card_bytes",
    "neutral",
    "render_answer",
    "render_answer_gone",
    "render_error",
    "render_help",
    "render_internal_error",
    "render_no_evidence",
    "render_not_connected",
    "render_question_dialog",
    "render_result",
    "render_searching",
    "render_store_unavailable",
    "render_timed_out",
]


def render_result(
    result: AskResult,
    *,
    vote: str | None = None,
    reason: str | None = None,
    reason_error: str | None = None,
    section: int | None = None,
) -> Json:
    """The card for any ``ask`` outcome; ``vote`` acknowledges the viewer's feedback, a 👎 with
    the reason form (``reason_error`` above it when re-shown) until ``reason`` is given;
    ``section`` is the runbook section an answer shows."""
    if result.status == "answered":
        return render_answer(
            result, vote=vote, reason=reason, reason_error=reason_error, section=section
        )
    if result.status == "abstained":
        return render_no_evidence(result, vote=vote, reason=reason, reason_error=reason_error)
    return render_error(result)
