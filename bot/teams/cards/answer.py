"""The answer card: answer text with [n] markers, source lines, expandable verified quotes,
feedback buttons and a footer, shrunk step by step until the activity fits Teams' limit."""

from __future__ import annotations

from bot.core.answers.citations import Source, group_citations, labelled_steps
from bot.core.answers.outcome_text import OWNER_LABEL, OWNER_NOTE
from bot.teams.cards.elements import (
    Json,
    adaptive_card,
    clip,
    execute,
    fits,
    neutral,
    one_line,
    rich_text,
    run,
    text_block,
)
from bot.teams.cards.feedback_form import reason_form, reason_thanks
from bot.teams.cards.runbook import other_runbooks, runbook_part
from bot.teams.cards.sources import (
    quote_container,
    quote_id,
    scope_footer,
    source_line,
)
from rag import AskResult

# Per source a toggle and a quote; the core cites a handful, so only outliers hit this.
MAX_SOURCES = 6
# (answer characters, quote characters per source, runbook section characters): tried in order
# until the card fits.
_SIZES = (
    (4000, 700, 2500),
    (4000, 400, 2000),
    (2500, 250, 1500),
    (1500, 150, 1000),
    (800, 80, 500),
)
# An owner is a team or a person: a longer value is no name to page.
OWNER_MAX = 80
PROVIDER_NOTES = {
    "claude": "AI-generated, check the sources",
    "extractive": "Quoted verbatim from runbooks",
}
VOTES = {"up": "👍 Helpful", "down": "👎 Not helpful"}
VOTE_ACKS = {
    "up": "Thanks: you marked this answer as helpful.",
    "down": "Thanks: you marked this answer as not helpful. The runbook owners will see it.",
}


def render_answer(
    result: AskResult,
    *,
    vote: str | None = None,
    reason: str | None = None,
    reason_error: str | None = None,
    section: int | None = None,
) -> Json:
    """``vote``: the clicker's recorded vote, shown instead of the feedback buttons (a 👎 with
    the reason form, or thanks for the ``reason`` given; ``reason_error`` when re-shown).
    ``section``: the runbook section shown (None: the one the answer cites)."""
    sources = group_citations(result.citations, answer=result.answer)
    feedback = feedback_part(result.answer_id, vote, reason=reason, reason_error=reason_error)
    card: Json = {}
    for answer_max, quote_max, section_max in _SIZES:
        panel = runbook_part(
            result, section=section, answer_id=result.answer_id, budget=section_max
        )
        card = _card(result, sources, answer_max, quote_max, feedback, panel)
        if fits(card):
            break
    return card


def feedback_actions(answer_id: str | None) -> list[Json]:
    if not answer_id:
        return []
    return [
        execute("feedback", title, {"answer_id": answer_id, "vote": vote})
        for vote, title in VOTES.items()
    ]


def feedback_part(
    answer_id: str | None,
    vote: str | None,
    *,
    reason: str | None = None,
    reason_error: str | None = None,
) -> tuple[list[Json], list[Json]]:
    """(body elements, card actions): the buttons, or the clicker's acknowledged vote; a 👎
    asks why (the reason form) until a reason is given."""
    if vote not in VOTE_ACKS:
        return [], feedback_actions(answer_id)
    if vote == "down" and reason:
        return [reason_thanks(reason)], []
    body = [text_block(VOTE_ACKS[vote], isSubtle=True, spacing="Medium")]
    if vote == "down" and answer_id:
        body += reason_form(answer_id, error=reason_error)
    return body, []


def _card(
    result: AskResult,
    sources: list[Source],
    answer_max: int,
    quote_max: int,
    feedback: tuple[list[Json], list[Json]],
    panel: list[Json],
) -> Json:
    shown = sources[:MAX_SOURCES]
    body = _answer_text(result.answer, answer_max) + owner_field(result)
    body += panel + other_runbooks(result)
    if shown:
        body.append(text_block("**Sources**", spacing="Medium"))
        body += [source_line(source.evidence, source.n) for source in shown]
        if hidden := len(sources) - len(shown):
            more = f"+{hidden} more source{'s' if hidden > 1 else ''}, not shown to fit in Teams"
            body.append(text_block(more, isSubtle=True, size="Small"))
        toggles = [
            {
                "type": "Action.ToggleVisibility",
                "title": f"Show quote [{source.n}]",
                "targetElements": [quote_id(source.n)],
            }
            for source in shown
        ]
        # A top-level ActionSet: toggles inside the toggled region misrender on iOS.
        body.append({"type": "ActionSet", "actions": toggles})
        body += [quote_container(source, quote_max) for source in shown]
    ack, actions = feedback
    body += ack
    body.append(scope_footer(result, PROVIDER_NOTES.get(result.provider)))
    return adaptive_card(body, actions)


def owner_field(result: AskResult) -> list[Json]:
    """The runbook's owner as who to contact, when the answer to "who do I page" found no one
    named in the runbook: labelled as the owner (front matter, CODEOWNERS, the Confluence
    author), so it never reads as a runbook's words; the name itself verbatim in a run."""
    owner = clip(one_line(result.owner_contact), OWNER_MAX)
    if not owner:
        return []
    label = run(OWNER_LABEL, weight="Bolder")
    return [rich_text(label, run(f" ({OWNER_NOTE}): ", isSubtle=True), run(owner))]


def _answer_text(answer: str, limit: int) -> list[Json]:
    # A step that quotes a command which changes state wears its label on the line above it.
    text = "\n".join(
        (f"{label}\n" if label else "") + step.text
        for label, step in labelled_steps(neutral(answer))
    ).strip()
    if not text:
        return [text_block("_The answer has no text; see the sources below._")]
    shortened = clip(text, limit)
    blocks = [rich_text(run(shortened))]
    if shortened != text:
        note = "Answer shortened to fit in Teams; open the sources below for the full runbooks."
        blocks.append(text_block(note, isSubtle=True, size="Small"))
    return blocks
