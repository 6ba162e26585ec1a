"""The answer card: answer text, sources, expandable quotes, share, feedback and footer."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from slack_sdk.models.blocks import (
    ActionsBlock,
    Block,
    ButtonElement,
    ContextActionsBlock,
    ContextBlock,
    FeedbackButtonObject,
    FeedbackButtonsElement,
    SectionBlock,
)

from bot.core.answers.citations import Source, group_citations, labelled_steps
from bot.core.answers.outcome_text import OWNER_LABEL, OWNER_NOTE
from bot.slack.blocks.card import TEXT_BUDGET, Card, build_card, button, interaction_id, text_units
from bot.slack.blocks.runbook import other_runbooks, runbook_blocks
from bot.slack.blocks.sources import (
    QUOTE_FLOOR,
    QUOTE_MAX,
    STALE_AFTER_DAYS,
    inline_quote,
    quote_container,
    quote_title,
    search_scope,
    source_line,
)
from bot.slack.blocks.text import clean, clip, escape_mrkdwn, mrkdwn, one_line, split_chunks, units
from rag import AskResult

SECTION_MAX = 3000
# Past this the answer is no longer a quick read mid-incident; the quotes carry the detail.
ANSWER_MAX = 4000
# Sources with their own quote block and toggle button; the rest are counted, not shown.
# Real answers cite a handful of excerpts (the core passes six), so only outliers hit this.
MAX_SOURCES = 6
FALLBACK_TEXT_MAX = 600
# The runbook section quoted on the card: at most this much, at least the floor (a paragraph),
# otherwise what the rest of the card leaves.
RUNBOOK_SECTION_MAX = 2500
RUNBOOK_SECTION_FLOOR = 300
# The panel's own lines around the quoted section: heading, note, section buttons.
_PANEL_OVERHEAD = 800

# An owner is a team or a person: a longer value is no name to page.
OWNER_MAX = 80

PROVIDER_NOTES = {
    "claude": "AI-generated, check the sources",
    "extractive": "Quoted verbatim from runbooks",
}


def render_answer(
    result: AskResult,
    *,
    expanded: frozenset[int] = frozenset(),
    ephemeral: bool = False,
    stale_after_days: int = STALE_AFTER_DAYS,
    section: int | None = None,
) -> Card:
    """Each quote sits in a collapsible container, except those in ``expanded``: they show
    inline, for clients without containers, and their button reads "Hide quote". The runbook
    panel shows section ``section`` of the answer's runbook (None: the one the answer cites)."""
    sources = group_citations(result.citations, answer=result.answer)
    shown = sources[:MAX_SOURCES]
    answer_id = interaction_id(result)
    hidden = len(sources) - len(shown)
    answer = _answer_sections(result.answer) + owner_field(result)
    listed = other_runbooks(result) + _source_sections(shown, hidden, stale_after_days)
    tail: list[Block] = []
    if shown and answer_id:
        toggles = [_toggle(source.n, source.n in expanded, answer_id) for source in shown]
        tail.append(ActionsBlock(elements=toggles))
    if ephemeral and answer_id:
        share = button("Share in channel", "share_answer", answer_id, primary=True)
        tail.append(ActionsBlock(elements=[share]))
    if answer_id:
        tail.append(_feedback(answer_id))
    tail.append(footer(result))
    # Each block is validated and serialized once (``to_dict``); the budgets read the JSON.
    answer_json, listed_json, tail_json = _json(answer), _json(listed), _json(tail)
    rest = sum(text_units(block) for block in [*answer_json, *listed_json, *tail_json])
    room = TEXT_BUDGET - rest - _PANEL_OVERHEAD - QUOTE_FLOOR * len(shown)
    panel_budget = max(RUNBOOK_SECTION_FLOOR, min(RUNBOOK_SECTION_MAX, room))
    panel = runbook_blocks(result, section=section, answer_id=answer_id, budget=panel_budget)
    head = [*answer_json, *_json(panel), *listed_json]
    budget = _quote_budget([*head, *tail_json], shown)
    quotes: list[Block] = [
        inline_quote(source, budget) if source.n in expanded else quote_container(source, budget)
        for source in shown
    ]
    return build_card(_fallback_text(result, len(sources)), [*head, *_json(quotes), *tail_json])


def _json(blocks: Sequence[Block]) -> list[dict[str, Any]]:
    return [block.to_dict() for block in blocks]


def footer(result: AskResult) -> ContextBlock:
    elements = [mrkdwn(search_scope(result))]
    if note := PROVIDER_NOTES.get(result.provider):
        elements.append(mrkdwn(note))
    return ContextBlock(elements=elements)


def _answer_sections(answer: str) -> list[Block]:
    # A step that quotes a command which changes state wears its label on the line above it.
    text = "\n".join(
        (f"*{escape_mrkdwn(label)}*\n" if label else "") + escape_mrkdwn(step.text)
        for label, step in labelled_steps(clean(answer))
    ).strip()
    if not text:
        return [SectionBlock(text=mrkdwn("_The answer has no text; see the sources below._"))]
    shortened = clip(text, ANSWER_MAX)
    blocks: list[Block] = [
        SectionBlock(text=mrkdwn(chunk)) for chunk in split_chunks(shortened, SECTION_MAX)
    ]
    if shortened != text:
        note = "Answer shortened to fit in Slack; open the sources below for the full runbooks."
        blocks.append(ContextBlock(elements=[mrkdwn(note)]))
    return blocks


def owner_field(result: AskResult) -> list[Block]:
    """The runbook's owner as who to contact, when the answer to "who do I page" found no one
    named in the runbook: labelled as the owner (front matter, CODEOWNERS, the Confluence
    author), so it never reads as a runbook's words."""
    owner = clip(escape_mrkdwn(one_line(result.owner_contact)), OWNER_MAX)
    if not owner:
        return []
    return [SectionBlock(text=mrkdwn(f"*{OWNER_LABEL}* ({OWNER_NOTE}): {owner}"))]


def _source_sections(shown: Sequence[Source], hidden: int, stale_after_days: int) -> list[Block]:
    if not shown:
        return []
    lines = "\n".join(
        source_line(source.evidence, source.n, stale_after_days=stale_after_days)
        for source in shown
    )
    blocks: list[Block] = [
        SectionBlock(text=mrkdwn(chunk))
        for chunk in split_chunks(f"*Sources*\n{lines}", SECTION_MAX)
    ]
    if hidden:
        more = f"+{hidden} more source{'s' if hidden > 1 else ''}, not shown to fit in Slack"
        blocks.append(ContextBlock(elements=[mrkdwn(more)]))
    return blocks


def _toggle(n: int, expanded: bool, answer_id: str) -> ButtonElement:
    verb, action = ("Hide", "hide_quote") if expanded else ("Show", "show_quote")
    return button(f"{verb} quote [{n}]", f"{action}:{n}", answer_id)


def _feedback(answer_id: str) -> ContextActionsBlock:
    buttons = FeedbackButtonsElement(
        action_id="feedback",
        positive_button=FeedbackButtonObject(
            text="Helpful", value=f"{answer_id}:up", accessibility_label="This answer helped"
        ),
        negative_button=FeedbackButtonObject(
            text="Not helpful",
            value=f"{answer_id}:down",
            accessibility_label="This answer did not help",
        ),
    )
    return ContextActionsBlock(elements=[buttons])


def _quote_budget(blocks: Sequence[dict[str, Any]], shown: Sequence[Source]) -> int:
    """Share what the message budget leaves among the quotes, within the per-quote bounds."""
    if not shown:
        return QUOTE_MAX
    used = sum(text_units(block) for block in blocks)
    used += sum(units(quote_title(source)) for source in shown)
    return max(QUOTE_FLOOR, min(QUOTE_MAX, (TEXT_BUDGET - used) // len(shown)))


def _fallback_text(result: AskResult, sources: int) -> str:
    answer = clip(escape_mrkdwn(one_line(result.answer)), FALLBACK_TEXT_MAX) or "Runbook answer"
    if not sources:
        return answer
    return f"{answer} ({sources} source{'s' if sources > 1 else ''})"
