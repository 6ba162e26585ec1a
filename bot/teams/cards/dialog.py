"""The "Ask runbooks" dialog: the question built from the alert post, editable before asking."""

from __future__ import annotations

from bot.teams.cards.elements import Json, adaptive_card, attachment, neutral, text_block

QUESTION_INPUT = "question"
DIALOG_TITLE = "Ask runbooks"


def render_question_dialog(question: str, *, max_chars: int) -> Json:
    """The ``composeExtension/fetchTask`` response: a dialog with the question prefilled."""
    card = adaptive_card(
        [
            text_block("Ask the runbooks about this message", weight="Bolder"),
            text_block("Edit the question if you like; the answer goes in the message's thread."),
            {
                "type": "Input.Text",
                "id": QUESTION_INPUT,
                "label": "Question",
                "isMultiline": True,
                "isRequired": True,
                "errorMessage": "Type a question",
                "maxLength": max_chars,
                "value": neutral(question)[:max_chars],
            },
        ],
        [{"type": "Action.Submit", "title": "Ask", "data": {"action": "askRunbooks"}}],
    )
    return {
        "task": {
            "type": "continue",
            "value": {"title": DIALOG_TITLE, "width": "medium", "card": attachment(card)},
        }
    }
