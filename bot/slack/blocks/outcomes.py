"""Cards for questions that got no answer: no runbook evidence, or an error on the way."""

from __future__ import annotations

from collections.abc import Sequence

from slack_sdk.models.blocks import ActionsBlock, Block, ContextBlock, HeaderBlock, SectionBlock

from bot.core.answers.nearby_runbooks import nearest_documents
from bot.core.answers.outcome_text import (
    ABSTENTION_REASONS,
    ERROR_MESSAGES,
    UNKNOWN_ABSTENTION,
    UNKNOWN_ERROR,
)
from bot.slack.blocks.card import Card, build_card, button, interaction_id
from bot.slack.blocks.sources import search_scope, source_line
from bot.slack.blocks.text import clip, escape_mrkdwn, mrkdwn, one_line
from rag import AskResult, Evidence

# Reasons where something was retrieved: the near misses may still be worth opening.
_SHOWS_NEAREST = frozenset({"low_confidence", "not_in_sources", "unverifiable_citations"})
NEXT_STEPS = (
    "*What next*\n"
    "• Ask again with the alert name or the service, "
    "e.g. `/runbook KubePodCrashLooping payments-api`\n"
    "• Page the team that owns the service\n"
    "• If a runbook should cover this, add one so the next responder gets an answer"
)

QUESTION_PROBLEM_MAX = 500


def render_no_evidence(result: AskResult) -> Card:
    reason = ABSTENTION_REASONS.get(result.reason_code or "", UNKNOWN_ABSTENTION)
    blocks: list[Block] = [
        HeaderBlock(text="No runbook evidence"),
        SectionBlock(
            text=mrkdwn(
                f"{reason} runbook-bot answers only from runbooks, so you get this instead "
                "of a guess."
            )
        ),
        ContextBlock(elements=[mrkdwn(search_scope(result))]),
    ]
    if result.reason_code in _SHOWS_NEAREST and result.evidence:
        title = "*Closest runbooks* (not close enough to answer from)"
        blocks.append(_documents(title, nearest_documents(result.evidence)))
    blocks.append(SectionBlock(text=mrkdwn(NEXT_STEPS)))
    return build_card(f"No runbook evidence: {reason}", blocks)


def render_error(result: AskResult) -> Card:
    if result.reason_code == "question_invalid":
        header = "Couldn't search for that"
        problem = clip(escape_mrkdwn(one_line(result.answer)), QUESTION_PROBLEM_MAX).rstrip(".")
        message = f"That question can't be searched: {problem or 'it is empty or too long'}."
    else:
        header = "Couldn't answer right now" if result.retryable else "Couldn't answer"
        message = ERROR_MESSAGES.get(result.reason_code or "", UNKNOWN_ERROR)
        if result.retryable:
            message += " Try again in a moment."
    blocks: list[Block] = [HeaderBlock(text=header), SectionBlock(text=mrkdwn(message))]
    # Evidence means the search itself succeeded: the responder can still open what it found.
    if result.evidence:
        blocks.append(ContextBlock(elements=[mrkdwn(search_scope(result))]))
        title = "*Runbooks found before the error*"
        blocks.append(_documents(title, nearest_documents(result.evidence)))
    answer_id = interaction_id(result)
    if result.retryable and answer_id:
        retry = button("Retry", "retry_answer", answer_id, primary=True)
        blocks.append(ActionsBlock(elements=[retry]))
    return build_card(f"{header}: {message}", blocks)


def _documents(title: str, documents: Sequence[Evidence]) -> SectionBlock:
    lines = "\n".join(source_line(evidence) for evidence in documents)
    return SectionBlock(text=mrkdwn(f"{title}\n{lines}"))
