"""The answer's runbook on the Teams card: its name, one section quoted verbatim (code blocks
whole, commands that change state labelled), a button per other section (a menu past five),
and the other runbooks, one line each.

A section button is an ``Action.Execute`` (verb ``showSection``) carrying the answer id, the
runbook's document id and the section index (past five sections the buttons sit behind an
``Action.ShowCard``); ``card_actions.py`` answers the invoke with the
card redrawn around that section (only the sections' text would not fit: a whole runbook in
toggled containers breaks the 28 KB activity limit long before a long runbook ends).
"""

from __future__ import annotations

from collections.abc import Sequence

from bot.core.answers.nearby_runbooks import other_runbooks as other_documents
from bot.core.answers.runbook_parts import Part, cited_numbers, shown_section
from bot.teams.cards.elements import (
    Json,
    clip,
    execute,
    link_run,
    one_line,
    rich_text,
    run,
    text_block,
)
from rag import AskResult, RunbookView

SECTION_VERB = "showSection"
SECTION_DATA = "section"
MAX_BUTTONS = 5
TITLE_MAX = 100
BUTTON_TITLE_MAX = 50


def runbook_part(
    result: AskResult, *, section: int | None, answer_id: str | None, budget: int
) -> list[Json]:
    """The runbook panel, its quoted section within ``budget`` characters."""
    view = result.runbook
    if view is None or not view.sections:
        return []
    shown = shown_section(view, section, budget=budget, size=_size)
    numbers = cited_numbers(view, shown.index, result.citations)
    marker = f" [{', '.join(map(str, numbers))}]" if numbers else ""
    body: list[Json] = [
        rich_text(
            run("Runbook: ", weight="Bolder"),
            link_run(clip(one_line(view.title), TITLE_MAX), view.url),
            run(" › "),
            run(clip(one_line(shown.section.heading), TITLE_MAX) + marker, weight="Bolder"),
            spacing="Medium",
        ),
        *_quoted(shown.parts, budget),
    ]
    note = "Section shortened to fit; " if shown.truncated else "Quoted verbatim from the runbook; "
    small = {"isSubtle": True, "size": "Small"}
    body.append(rich_text(run(note, **small), link_run("open the runbook", view.url, **small)))
    if answer_id:
        body += _navigation(view, shown.index, answer_id)
    return body


def other_runbooks(result: AskResult) -> list[Json]:
    others = other_documents(result)
    if not others:
        return []
    lines = [
        rich_text(
            run("• "), link_run(clip(one_line(e.title) or "Untitled runbook", TITLE_MAX), e.url)
        )
        for e in others
    ]
    return [text_block("**Other runbooks**", spacing="Medium"), *lines]


def _navigation(view: RunbookView, index: int, answer_id: str) -> list[Json]:
    """A button per other section; past five, behind an "Other sections" card. No inputs:
    a section must show even while the 👎 reason form (a required input) is open."""
    targets = [i for i in view.offered() if i != index]
    buttons = [_button(view, i, answer_id) for i in targets]
    if len(buttons) <= MAX_BUTTONS:
        return [{"type": "ActionSet", "actions": buttons}] if buttons else []
    rows = [
        {"type": "ActionSet", "actions": buttons[at : at + MAX_BUTTONS]}
        for at in range(0, len(buttons), MAX_BUTTONS)
    ]
    more = {
        "type": "Action.ShowCard",
        "title": f"Other sections ({len(buttons)})",
        "card": {"type": "AdaptiveCard", "body": rows},
    }
    return [{"type": "ActionSet", "actions": [more]}]


def _button(view: RunbookView, index: int, answer_id: str) -> Json:
    data = {"answer_id": answer_id, "document_id": view.document_id, "section": index}
    title = clip(one_line(view.sections[index].heading), BUTTON_TITLE_MAX)
    button = execute(SECTION_VERB, title, data)
    button["associatedInputs"] = "none"
    button["fallback"]["associatedInputs"] = "none"
    return button


def _quoted(parts: Sequence[Part], budget: int) -> list[Json]:
    blocks: list[Json] = []
    for part in parts:
        text = clip(part.text, max(budget, 40))
        budget -= len(text)
        if part.label:
            blocks.append(rich_text(run(part.label, weight="Bolder", color="Warning")))
        if part.code:
            blocks.append(rich_text(run(text, fontType="Monospace")))
        else:
            style = {"weight": "Bolder"} if part.heading else {}
            blocks.append(rich_text(run(text, **style)))
    return blocks


def _size(part: Part) -> int:
    return len(part.text) + (len(part.label) if part.label else 0)
