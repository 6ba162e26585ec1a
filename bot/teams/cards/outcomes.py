"""Cards for questions that got no answer: no runbook evidence, or an error on the way."""

from __future__ import annotations

from bot.core.answers.nearby_runbooks import nearest_documents
from bot.core.answers.outcome_text import (
    ABSTENTION_REASONS,
    ERROR_MESSAGES,
    UNKNOWN_ABSTENTION,
    UNKNOWN_ERROR,
)
from bot.teams.cards.answer import feedback_part
from bot.teams.cards.elements import (
    Json,
    adaptive_card,
    clip,
    execute,
    one_line,
    rich_text,
    run,
    text_block,
)
from bot.teams.cards.sources import scope_footer, source_line
from rag import AskResult, Evidence

NEXT_STEPS = (
    "**What next**\r"
    "- Ask again with the alert name or the service, e.g. _KubePodCrashLooping payments-api_\r"
    "- Page the team that owns the service\r"
    "- If a runbook should cover this, add one so the next responder gets an answer"
)

QUESTION_PROBLEM_MAX = 500


def render_no_evidence(
    result: AskResult,
    *,
    vote: str | None = None,
    reason: str | None = None,
    reason_error: str | None = None,
) -> Json:
    """Every abstention reason: say so plainly, and list the tenant's nearest runbooks."""
    reason = ABSTENTION_REASONS.get(result.reason_code or "", UNKNOWN_ABSTENTION)
    body = [
        text_block("No runbook evidence", size="Large", weight="Bolder"),
        text_block(
            f"{reason} runbook-bot answers only from runbooks, so you get this instead of a guess."
        ),
    ]
    if result.evidence:
        body += _documents("**Closest runbooks** (not close enough to answer from)", result)
    body.append(text_block(NEXT_STEPS, spacing="Medium"))
    ack, actions = feedback_part(result.answer_id, vote, reason=reason, reason_error=reason_error)
    body += ack
    body.append(scope_footer(result))
    return adaptive_card(body, actions)


def render_error(result: AskResult) -> Json:
    """A failure the asker can act on: what went wrong in fixed words, and Retry if it may pass."""
    if result.reason_code == "question_invalid":
        header = "Couldn't search for that"
        problem = clip(one_line(result.answer), QUESTION_PROBLEM_MAX).rstrip(".")
        detail = rich_text(
            run("That question can't be searched: "), run(problem or "it is empty or too long")
        )
        body = [text_block(header, size="Large", weight="Bolder"), detail]
    else:
        header = "Couldn't answer right now" if result.retryable else "Couldn't answer"
        message = ERROR_MESSAGES.get(result.reason_code or "", UNKNOWN_ERROR)
        if result.retryable:
            message += " Try again in a moment."
        body = [text_block(header, size="Large", weight="Bolder"), text_block(message)]
    # Evidence means the search itself succeeded: the responder can still open what it found.
    if result.evidence:
        body += _documents("**Runbooks found before the error**", result)
        body.append(scope_footer(result))
    actions = []
    if result.retryable and result.answer_id:
        actions.append(execute("retry", "Retry", {"answer_id": result.answer_id}))
    return adaptive_card(body, actions)


def _documents(title: str, result: AskResult) -> list[Json]:
    documents: list[Evidence] = nearest_documents(result.evidence)
    return [text_block(title, spacing="Medium"), *(source_line(e) for e in documents)]
