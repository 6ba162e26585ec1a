"""The 👎 reason form on a Teams card: the same reasons and comment limit as the Slack modal.

Teams merges the inputs' values into the ``feedbackReason`` action's data (``Action.Execute``,
or its ``Action.Submit`` fallback), next to the answer id.
"""

from __future__ import annotations

from bot.core.owners.feedback_reasons import COMMENT_MAX, REASONS, reason_label
from bot.teams.cards.elements import Json, execute, text_block

REASON_VERB = "feedbackReason"
REASON_INPUT, COMMENT_INPUT = "reason", "comment"
PICK_A_REASON = "Pick a reason, then send."


def reason_form(answer_id: str, *, error: str | None = None) -> list[Json]:
    """Body elements: a short error line (when re-shown), the reason, the comment and Send."""
    body = [text_block("What was wrong? The runbook's owner gets your reason.", spacing="Medium")]
    if error:
        body.append(text_block(error, color="Attention", weight="Bolder"))
    body += [
        {
            "type": "Input.ChoiceSet",
            "id": REASON_INPUT,
            "label": "Reason",
            "style": "compact",
            "isRequired": True,
            "errorMessage": PICK_A_REASON,
            "choices": [{"title": label, "value": code} for code, label in REASONS.items()],
        },
        {
            "type": "Input.Text",
            "id": COMMENT_INPUT,
            "label": "Anything to add? (optional)",
            "isMultiline": True,
            "maxLength": COMMENT_MAX,
        },
        # In the body, not the card's actions: those are the vote buttons' place.
        {"type": "ActionSet", "actions": [execute(REASON_VERB, "Send", {"answer_id": answer_id})]},
    ]
    return body


def reason_thanks(reason: str) -> Json:
    return text_block(
        f"Thanks: your reason ({reason_label(reason)}) goes to the runbook's owner.",
        isSubtle=True,
        spacing="Medium",
    )
