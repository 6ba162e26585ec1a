"""Putting cards in front of people: thread posts, updates, response_url replies, status marks.

Every send counts its failures; none is retried here (the client's retry handlers already honour
Retry-After and 5xx), so a send that timed out is never blindly posted a second time.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable
from contextlib import asynccontextmanager
from typing import Any

import aiohttp
from slack_bolt.async_app import AsyncRespond
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient
from slack_sdk.webhook import WebhookResponse

from bot.core.metrics import BotMetrics
from bot.slack.blocks import Card

logger = logging.getLogger(__name__)

WORKING_REACTION = "mag"
# The post went nowhere because of where it was aimed, not because Slack failed.
UNREACHABLE_CHANNEL = frozenset({"not_in_channel", "channel_not_found", "is_archived"})


class DeliveryError(Exception):
    """A response_url reply was refused (Slack answered with a non-2xx status)."""


def slack_error(exc: SlackApiError) -> str:
    return str(exc.response.get("error") or "unknown_error")


class Delivery:
    def __init__(self, metrics: BotMetrics) -> None:
        self._metrics = metrics

    async def post(
        self, client: AsyncWebClient, *, channel: str, thread_ts: str | None, card: Card
    ) -> str:
        """Post a card (in a thread when ``thread_ts``); returns the message ts."""
        response = await self._call(
            "chat.postMessage",
            client.chat_postMessage(
                channel=channel,
                thread_ts=thread_ts,
                text=card.text,
                blocks=card.blocks or None,
                unfurl_links=False,
                unfurl_media=False,
            ),
        )
        return str(response["ts"])

    async def update(self, client: AsyncWebClient, *, channel: str, ts: str, card: Card) -> None:
        await self._call(
            "chat.update",
            client.chat_update(channel=channel, ts=ts, text=card.text, blocks=card.blocks or None),
        )

    async def respond(
        self,
        respond: AsyncRespond,
        card: Card,
        *,
        in_channel: bool = False,
        replace_original: bool = False,
    ) -> None:
        """Reply through the request's response_url (ephemeral unless ``in_channel``)."""
        await self._webhook(
            respond(
                text=card.text,
                blocks=card.blocks or None,
                response_type="in_channel" if in_channel else "ephemeral",
                replace_original=replace_original,
                unfurl_links=False,
                unfurl_media=False,
            )
        )

    async def discard(self, respond: AsyncRespond) -> None:
        """Delete the message the response_url belongs to (an ephemeral card that was shared)."""
        await self._webhook(respond(delete_original=True))

    async def _webhook(self, call: Awaitable[WebhookResponse]) -> None:
        response: WebhookResponse = await self._call("response_url", call)
        if response.status_code >= 300:
            self._metrics.post_failures.labels("response_url", str(response.status_code)).inc()
            raise DeliveryError(f"response_url answered {response.status_code}")

    async def _call(self, method: str, call: Any) -> Any:
        try:
            return await call
        except SlackApiError as exc:
            self._metrics.post_failures.labels(method, slack_error(exc)).inc()
            raise
        except (aiohttp.ClientError, TimeoutError):
            self._metrics.post_failures.labels(method, "connection_failed").inc()
            raise


@asynccontextmanager
async def working_mark(client: AsyncWebClient, *, channel: str, ts: str) -> AsyncIterator[None]:
    """A reaction on the asker's message while an answer is being made.

    Best effort: a missing scope or a rate limit must never cost the asker their answer.
    """
    added = await _react(client.reactions_add, channel=channel, ts=ts)
    try:
        yield
    finally:
        if added:
            await _react(client.reactions_remove, channel=channel, ts=ts)


async def _react(method: Any, *, channel: str, ts: str) -> bool:
    try:
        await method(channel=channel, timestamp=ts, name=WORKING_REACTION)
    except (SlackApiError, aiohttp.ClientError, TimeoutError) as exc:
        logger.info("status reaction skipped: %s", type(exc).__name__)
        return False
    return True
