"""Our turn-error handler, for the app and the adapter (the SDK's default posts the exception
text into the chat): log it, then show a fixed card or answer the invoke, never ``str(exc)``."""

from __future__ import annotations

import logging

import psycopg
from microsoft_agents.hosting.core import TurnContext

from bot.teams.cards import (
    Json,
    render_internal_error,
    render_store_unavailable,
)
from bot.teams.cards.notices import INTERNAL_ERROR
from bot.teams.delivery import card_activity
from bot.teams.invokes import card_response, message_task, respond
from bot.teams.metrics import TeamsMetrics
from rag import StoreError

logger = logging.getLogger(__name__)


class TurnErrorHandler:
    def __init__(self, metrics: TeamsMetrics) -> None:
        self._metrics = metrics

    async def handle(self, context: TurnContext, error: Exception) -> None:
        activity = context.activity
        kind = activity.name if activity.type == "invoke" else activity.type
        logger.error(
            "Teams turn failed on %s %s: %s",
            kind,
            activity.id,
            type(error).__name__,
            exc_info=error,
        )
        down = isinstance(error, StoreError | psycopg.OperationalError)
        card = render_store_unavailable() if down else render_internal_error()
        try:
            if activity.type == "invoke":
                await respond(context, _invoke_body(activity.name or "", card))
            elif activity.type == "message":
                await context.send_activity(card_activity(card))
        except Exception as exc:  # the connector itself may be what failed
            logger.warning("Teams error card not delivered: %s", type(exc).__name__)


def _invoke_body(name: str, card: Json) -> Json:
    if name == "adaptiveCard/action":
        return card_response(card)
    if name.startswith("composeExtension/"):
        return message_task(INTERNAL_ERROR)
    return {}
