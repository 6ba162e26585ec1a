"""Invoke responses: the HTTP body Teams waits for on invokes (dialogs, card actions)."""

from __future__ import annotations

from typing import Any

from microsoft_agents.activity import Activity, ActivityTypes
from microsoft_agents.hosting.core import TurnContext

from bot.teams.cards import ADAPTIVE_CARD, Json


async def respond(context: TurnContext, body: Any = None, status: int = 200) -> None:
    """Set the invoke's HTTP response (sent when the turn ends); ``None`` = an empty 200."""
    await context.send_activity(
        Activity(type=ActivityTypes.invoke_response, value={"status": status, "body": body})
    )


def card_response(card: Json) -> Json:
    """An ``adaptiveCard/action`` answer: this card replaces the clicked one for the clicker."""
    return {"statusCode": 200, "type": ADAPTIVE_CARD, "value": card}


def message_task(text: str) -> Json:
    """A message-extension answer that shows ``text`` in a small dialog."""
    return {"task": {"type": "message", "value": text}}


def value_of(activity: Activity) -> dict[str, Any]:
    return as_dict(activity.value)


def as_dict(value: object) -> dict[str, Any]:
    """Untrusted JSON where an object is expected: the object, or an empty one."""
    return value if isinstance(value, dict) else {}
