"""The answer's runbook on the card: its name, one section quoted verbatim (code blocks whole,
commands that change state labelled), a button per other section, and the other runbooks.

A section button (``show_section:<i>``; a ``pick_section`` menu past five sections) carries
the answer id, the runbook's document id and the section index; ``actions.py`` redraws the
card in place with that section.
"""

from __future__ import annotations

from collections.abc import Sequence

from slack_sdk.models.blocks import (
    ActionsBlock,
    Block,
    ButtonElement,
    ContextBlock,
    Option,
    RichTextBlock,
    RichTextElement,
    RichTextPreformattedElement,
    RichTextSectionElement,
    SectionBlock,
    StaticSelectElement,
)
from slack_sdk.models.blocks.block_elements import RichTextElementParts

from bot.core.answers.nearby_runbooks import other_runbooks as other_documents
from bot.core.answers.runbook_parts import Part, cited_numbers, shown_section
from bot.core.answers.section_choice import section_value
from bot.slack.blocks.card import BUTTON_VALUE_MAX
from bot.slack.blocks.sources import LABEL_MAX
from bot.slack.blocks.text import clean, clip, escape_mrkdwn, link, mrkdwn, one_line, units
from rag import AskResult, RunbookView

# Section buttons in one actions block before they become a menu (bolt's own guidance: a row of
# more than five buttons wraps into a wall).
MAX_BUTTONS = 5
OPTION_TEXT_MAX = 75
OPTION_VALUE_MAX = 150
HEADING_MAX = 150
SHOW_SECTION = "show_section"
PICK_SECTION = "pick_section"


def runbook_blocks(
    result: AskResult, *, section: int | None, answer_id: str | None, budget: int
) -> list[Block]:
    """The runbook panel within ``budget`` text units (the quoted section is what shrinks)."""
    view = result.runbook
    if view is None or not view.sections:
        return []
    shown = shown_section(view, section, budget=budget, size=_units)
    numbers = cited_numbers(view, shown.index, result.citations)
    marker = f" [{', '.join(map(str, numbers))}]" if numbers else ""
    title = link(view.url, clip(escape_mrkdwn(one_line(view.title)), LABEL_MAX))
    heading = clip(escape_mrkdwn(one_line(shown.section.heading)), HEADING_MAX)
    blocks: list[Block] = [
        SectionBlock(text=mrkdwn(f"*Runbook:* {title} › *{heading}*{marker}")),
        RichTextBlock(elements=_quoted(shown.parts, budget)),
    ]
    where = link(view.url, "open the runbook")
    note = (
        f"Section shortened to fit; {where} for the rest."
        if shown.truncated
        else f"Quoted verbatim from the runbook; {where}."
    )
    blocks.append(ContextBlock(elements=[mrkdwn(note)]))
    if answer_id and (navigation := _navigation(view, shown.index, answer_id)):
        blocks.append(navigation)
    return blocks


def other_runbooks(result: AskResult) -> list[Block]:
    """The next documents after the answer's runbook, one line each."""
    others = other_documents(result)
    if not others:
        return []
    lines = [
        "• " + link(e.url, clip(escape_mrkdwn(one_line(e.title) or "Untitled runbook"), LABEL_MAX))
        for e in others
    ]
    return [SectionBlock(text=mrkdwn("*Other runbooks*\n" + "\n".join(lines)))]


def _navigation(view: RunbookView, index: int, answer_id: str) -> ActionsBlock | None:
    targets = [i for i in view.offered() if i != index]
    values = {i: section_value(answer_id, view.document_id, i) for i in targets}
    if not targets:
        return None
    if len(targets) <= MAX_BUTTONS:
        if any(units(v) > BUTTON_VALUE_MAX for v in values.values()):
            return None
        return ActionsBlock(
            elements=[
                ButtonElement(
                    text=clip(one_line(view.sections[i].heading), OPTION_TEXT_MAX),
                    action_id=f"{SHOW_SECTION}:{i}",
                    value=values[i],
                )
                for i in targets
            ]
        )
    if any(units(v) > OPTION_VALUE_MAX for v in values.values()):
        return None
    options = [
        Option(text=clip(one_line(view.sections[i].heading), OPTION_TEXT_MAX), value=values[i])
        for i in targets
    ]
    menu = StaticSelectElement(
        placeholder="Show another section", action_id=PICK_SECTION, options=options
    )
    return ActionsBlock(elements=[menu])


def _quoted(parts: Sequence[Part], budget: int) -> list[RichTextElement]:
    # Rich text is literal: a runbook line saying <!channel> shows those characters.
    elements: list[RichTextElement] = []
    for part in parts:
        text = clip(clean(part.text), max(budget, 40))
        budget -= units(text)
        if part.label:
            label = RichTextElementParts.Text(text=part.label, style={"bold": True})
            elements.append(RichTextSectionElement(elements=[label]))
        piece = RichTextElementParts.Text(
            text=text or " ", style={"bold": True} if part.heading else None
        )
        if part.code:
            elements.append(RichTextPreformattedElement(elements=[piece]))
        else:
            elements.append(RichTextSectionElement(elements=[piece]))
    return elements or [RichTextSectionElement(elements=[RichTextElementParts.Text(text="…")])]


def _units(part: Part) -> int:
    return units(part.text) + (units(part.label) if part.label else 0)
