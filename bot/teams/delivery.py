"""Putting cards into Teams through the Bot Connector, with retries that never duplicate.

Retried: 429, 412, 502 and 504 (Teams' throttling and gateway answers) with exponential backoff
and jitter, after ``Retry-After`` when the connector sends one; a connection that was refused
before anything was sent. Never retried: a POST whose outcome is unknown (a timeout or a dropped
connection after sending), because re-posting could show the card twice. Updates (PUT) and
deletes are idempotent and are retried on those too.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import Awaitable, Callable
from email.utils import parsedate_to_datetime
from typing import TypeVar

import aiohttp
from microsoft_agents.activity import Activity, Attachment, ConversationReference
from microsoft_agents.hosting.core import ConnectorClientBase

from bot.teams.cards import ADAPTIVE_CARD, Json
from bot.teams.metrics import TeamsMetrics

logger = logging.getLogger(__name__)

RETRYABLE_STATUSES = frozenset({412, 429, 502, 504})
MAX_ATTEMPTS = 4
BACKOFF_BASE_S = 0.5
BACKOFF_MAX_S = 8.0
# A Retry-After longer than this is not waited for inline: the post fails visibly instead.
RETRY_AFTER_MAX_S = 15.0
CALL_TIMEOUT_S = 15.0

T = TypeVar("T")


class ConnectorError(Exception):
    """A connector call failed for good; ``status`` None means no HTTP answer was read."""

    def __init__(self, operation: str, status: int | None, *, outcome_unknown: bool) -> None:
        super().__init__(f"{operation} failed ({status or 'no response'})")
        self.operation = operation
        self.status = status
        self.outcome_unknown = outcome_unknown


def retry_after_s(headers: object) -> float | None:
    """Seconds from a ``Retry-After`` header (delta-seconds or an HTTP date), if any."""
    value = headers.get("Retry-After") if hasattr(headers, "get") else None
    if not isinstance(value, str) or not value.strip():
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        moment = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, moment.timestamp() - time.time())


def backoff_s(attempt: int) -> float:
    """Exponential backoff with jitter: spread retries so a throttled burst doesn't re-collide."""
    ceiling = min(BACKOFF_MAX_S, BACKOFF_BASE_S * 2 ** (attempt - 1))
    return random.uniform(ceiling / 2, ceiling)


class Delivery:
    def __init__(self, metrics: TeamsMetrics) -> None:
        self._metrics = metrics

    async def post(
        self, client: ConnectorClientBase, reference: ConversationReference, card: Json
    ) -> str:
        """Post a card into the reference's conversation (a thread: its ``;messageid=``)."""
        activity = card_activity(card).apply_conversation_reference(reference)
        conversation = _conversation_id(reference)
        reply_to = activity.reply_to_id

        async def send() -> str:
            if reply_to:
                sent = await client.conversations.reply_to_activity(
                    conversation, reply_to, activity
                )
            else:
                sent = await client.conversations.send_to_conversation(conversation, activity)
            return sent.id or ""

        return await self._call("post", send, idempotent=False)

    async def update(
        self,
        client: ConnectorClientBase,
        reference: ConversationReference,
        activity_id: str,
        card: Json,
    ) -> None:
        """Replace a posted card in place, for everyone (``PUT …/activities/{id}``)."""
        unthreaded = reference.model_copy(update={"activity_id": None})
        activity = card_activity(card).apply_conversation_reference(unthreaded)
        activity.id = activity_id
        conversation = _conversation_id(reference)

        async def put() -> None:
            await client.conversations.update_activity(conversation, activity_id, activity)

        await self._call("update", put, idempotent=True)

    async def delete(
        self, client: ConnectorClientBase, reference: ConversationReference, activity_id: str
    ) -> None:
        conversation = _conversation_id(reference)

        async def remove() -> None:
            await client.conversations.delete_activity(conversation, activity_id)

        await self._call("delete", remove, idempotent=True)

    async def show(
        self,
        client: ConnectorClientBase,
        reference: ConversationReference,
        card: Json,
        *,
        placeholder: str | None,
    ) -> str:
        """The final card: in place of the placeholder when there is one, else a new post.

        If the placeholder cannot be updated it is removed (best effort) before posting, so a
        "Searching…" card is never left next to the answer.
        """
        if placeholder:
            try:
                await self.update(client, reference, placeholder, card)
                return placeholder
            except ConnectorError:
                try:
                    await self.delete(client, reference, placeholder)
                except ConnectorError:
                    logger.warning("placeholder %s could not be updated or removed", placeholder)
        return await self.post(client, reference, card)

    async def _call(
        self, operation: str, call: Callable[[], Awaitable[T]], *, idempotent: bool
    ) -> T:
        for attempt in range(1, MAX_ATTEMPTS + 1):
            try:
                async with asyncio.timeout(CALL_TIMEOUT_S):
                    return await call()
            except aiohttp.ClientResponseError as exc:
                wait = retry_after_s(exc.headers)
                retryable = exc.status in RETRYABLE_STATUSES and (
                    wait is None or wait <= RETRY_AFTER_MAX_S
                )
                if not retryable or attempt == MAX_ATTEMPTS:
                    raise self._failed(operation, exc.status, outcome_unknown=False) from exc
                label = str(exc.status)
                delay = (wait + random.uniform(0, 0.25)) if wait is not None else backoff_s(attempt)
            except aiohttp.ClientConnectorError as exc:
                # Refused before anything was sent: safe to try again, even for a POST.
                if attempt == MAX_ATTEMPTS:
                    raise self._failed(operation, None, outcome_unknown=False) from exc
                label, delay = "connect", backoff_s(attempt)
            except (aiohttp.ClientError, TimeoutError) as exc:
                # The request may have reached Teams: a POST is not repeated blindly.
                if not idempotent or attempt == MAX_ATTEMPTS:
                    raise self._failed(operation, None, outcome_unknown=True) from exc
                label, delay = "connection", backoff_s(attempt)
            self._metrics.connector_retries.labels(label).inc()
            logger.info("connector %s got %s; retrying in %.2f s", operation, label, delay)
            await asyncio.sleep(delay)
        raise AssertionError("unreachable: the last attempt returns or raises")

    def _failed(self, operation: str, status: int | None, *, outcome_unknown: bool) -> Exception:
        self._metrics.connector_failures.labels(operation, str(status or "none")).inc()
        logger.warning("connector %s failed: %s", operation, status or "no response")
        return ConnectorError(operation, status, outcome_unknown=outcome_unknown)


def card_activity(card: Json) -> Activity:
    """A message carrying one Adaptive Card and nothing else: no text, no mention entities."""
    return Activity(
        type="message",
        attachments=[Attachment(content_type=ADAPTIVE_CARD, content=card)],
    )


def _conversation_id(reference: ConversationReference) -> str:
    if reference.conversation is None or not reference.conversation.id:
        raise ValueError("a conversation reference without a conversation id")
    return reference.conversation.id
