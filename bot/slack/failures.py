"""The one ``@app.error`` handler: log the failure, then show the asker a fixed, friendly card.

Silence is the failure users hate most ("👀 then nothing"), so every unexpected error ends in a
visible card where the request came from; the exception text itself is never shown.
"""

from __future__ import annotations

import logging
from typing import Any

import aiohttp
import psycopg
from slack_bolt.async_app import AsyncBoltContext
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.core.metrics import BotMetrics
from bot.slack.blocks import render_internal_error, render_store_unavailable
from bot.slack.delivery.posts import Delivery, DeliveryError
from rag import StoreError

logger = logging.getLogger(__name__)


class ErrorReporter:
    def __init__(self, delivery: Delivery, metrics: BotMetrics) -> None:
        self._delivery = delivery
        self._metrics = metrics

    async def handle(
        self,
        error: Exception,
        body: dict[str, Any],
        client: AsyncWebClient,
        context: AsyncBoltContext,
    ) -> None:
        self._metrics.listener_errors.inc()
        logger.error(
            "listener failed on %s: %s", _describe(body), type(error).__name__, exc_info=error
        )
        # The database being down is worth saying in plain words: it is not the asker's fault,
        # and it passes. (The core's own queries turn it into a coded result; these are ours.)
        down = isinstance(error, StoreError | psycopg.OperationalError)
        card = render_store_unavailable() if down else render_internal_error()
        event = body.get("event") or {}
        try:
            if context.respond is not None and context.respond.response_url:
                await self._delivery.respond(context.respond, card)
            elif event.get("channel") and event.get("ts"):
                thread_ts = event.get("thread_ts") or event["ts"]
                await self._delivery.post(
                    client, channel=event["channel"], thread_ts=thread_ts, card=card
                )
        except (SlackApiError, DeliveryError, aiohttp.ClientError, TimeoutError) as exc:
            # Slack itself is failing; the log above is all that is left to do.
            logger.warning("error card not delivered: %s", type(exc).__name__)


def _describe(body: dict[str, Any]) -> str:
    """Ids only: payload text may hold anything and never goes to the log."""
    kind = body.get("type") or ("command" if "command" in body else "request")
    return f"{kind} {body.get('event_id') or body.get('trigger_id') or ''}".strip()
