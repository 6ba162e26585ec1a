"""The review dialog of "Draft a runbook from this thread" in Teams: an Adaptive Card in a task
module where the asker edits the title, the text and the owner, and picks where it goes (a new
runbook, or a section appended to the nearest existing one, shown with its title)."""

from __future__ import annotations

from bot.teams.cards.elements import Json, adaptive_card, attachment, neutral, text_block

DRAFT_COMMAND = "draftRunbook"
TITLE_INPUT, TEXT_INPUT = "draft_title", "draft_text"
OWNER_INPUT, DESTINATION_INPUT = "draft_owner", "draft_destination"
DIALOG_TITLE = "Draft a runbook"
TEXT_MAX = 20_000  # the whole draft fits a card; a longer one goes out as drafted


def draft_dialog(
    *,
    tenant: str,
    draft_id: str,
    title: str,
    body: str,
    owner: str,
    summary: str,
    nearest: tuple[str, str] | None,
) -> Json:
    """The ``composeExtension/fetchTask`` answer: the draft, editable, with a submit button
    carrying only the draft's id (the draft itself stays server-side)."""
    choices = [{"title": "A new runbook", "value": "new"}]
    if nearest is not None:
        document_id, near_title = nearest
        choices.append(
            {"title": f"A new section in “{neutral(near_title)}”", "value": f"append:{document_id}"}
        )
    card = adaptive_card(
        [
            text_block(summary),
            _input(TITLE_INPUT, "Title", title, required=True, max_length=200),
            _input(TEXT_INPUT, "Runbook (Markdown)", body[:TEXT_MAX], multiline=True),
            _input(OWNER_INPUT, "Owner", owner, max_length=200),
            {
                "type": "Input.ChoiceSet",
                "id": DESTINATION_INPUT,
                "label": "Where it goes",
                "style": "expanded",
                "value": "new",
                "choices": choices,
            },
        ],
        [
            {
                "type": "Action.Submit",
                "title": "Open the pull request",
                "data": {"action": DRAFT_COMMAND, "tenant": tenant, "draft_id": draft_id},
            }
        ],
    )
    return {
        "task": {
            "type": "continue",
            "value": {"title": DIALOG_TITLE, "width": "large", "card": attachment(card)},
        }
    }


def _input(
    input_id: str,
    label: str,
    value: str,
    *,
    required: bool = False,
    multiline: bool = False,
    max_length: int | None = None,
) -> Json:
    element: Json = {
        "type": "Input.Text",
        "id": input_id,
        "label": label,
        "value": neutral(value),
        "isMultiline": multiline,
    }
    if required:
        element |= {"isRequired": True, "errorMessage": f"{label} is required"}
    if max_length is not None:
        element["maxLength"] = max_length
    return element
