"""Putting cards in front of people: thread posts, updates, response_url replies, status marks.

Every send counts its failures. A post made for a job carries the job's id in Slack message
metadata; when its outcome is unknown (5xx, dropped connection, timeout: Slack may have stored
it) or the job is a re-run, the thread is searched for that id before anything is posted again,
so an answer appears once. Only 429s are retried blindly (the client's handlers): Slack stored
nothing then.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable
from dataclasses import dataclass
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
# Message metadata on every card a job posts: {"job_id", "answer_id"} as the event payload.
ANSWER_EVENT = "runbook_answer"
# Messages read when looking for a job's card: it follows the asker's message closely.
_REPLIES_LIMIT = 100
# The post went nowhere because of where it was aimed, not because Slack failed.
UNREACHABLE_CHANNEL = frozenset({"not_in_channel", "channel_not_found", "is_archived"})


class DeliveryError(Exception):
    """A response_url reply was refused (Slack answered with a non-2xx status)."""


def slack_error(exc: SlackApiError) -> str:
    return str(exc.response.get("error") or "unknown_error")


def outcome_unknown(exc: Exception) -> bool:
    """Slack may have done what was asked: a 5xx, a dropped connection, a timeout."""
    if isinstance(exc, SlackApiError):
        return int(exc.response.status_code) >= 500
    return isinstance(exc, aiohttp.ClientError | TimeoutError)


@dataclass(frozen=True)
class PostTag:
    """Which job a card belongs to, carried in its message metadata, and where to look for it
    (``since``: the asker's message ts; the card can only come after it)."""

    job_id: str
    answer_id: str | None = None
    since: str | None = None

    def metadata(self) -> dict[str, Any]:
        payload = {"job_id": self.job_id, "answer_id": self.answer_id or self.job_id}
        return {"event_type": ANSWER_EVENT, "event_payload": payload}

    def matches(self, message: dict[str, Any]) -> bool:
        metadata = message.get("metadata") or {}
        payload = metadata.get("event_payload") or {}
        return metadata.get("event_type") == ANSWER_EVENT and payload.get("job_id") == self.job_id


class Delivery:
    def __init__(self, metrics: BotMetrics) -> None:
        self._metrics = metrics

    async def post(
        self,
        client: AsyncWebClient,
        *,
        channel: str,
        thread_ts: str | None,
        card: Card,
        tag: PostTag | None = None,
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
                metadata=tag.metadata() if tag else None,
            ),
        )
        return str(response["ts"])

    async def post_once(
        self,
        client: AsyncWebClient,
        *,
        channel: str,
        thread_ts: str | None,
        card: Card,
        tag: PostTag,
        look_first: bool,
    ) -> str:
        """Post ``card`` in the thread (or top-level) unless it is there already; returns its ts.

        ``look_first`` for a re-run (an earlier run may have posted it). A post whose outcome
        is unknown is looked for before it is sent again, once; if Slack still fails, the
        job is retried later and looks again.
        """
        if look_first and (found := await self.find_tagged(client, channel, thread_ts, tag)):
            return found
        try:
            return await self.post(client, channel=channel, thread_ts=thread_ts, card=card, tag=tag)
        except (SlackApiError, aiohttp.ClientError, TimeoutError) as exc:
            if not outcome_unknown(exc):
                raise
        if found := await self.find_tagged(client, channel, thread_ts, tag):
            logger.info("post of job %s had landed; not posted again", tag.job_id)
            return found
        return await self.post(client, channel=channel, thread_ts=thread_ts, card=card, tag=tag)

    async def find_tagged(
        self, client: AsyncWebClient, channel: str, thread_ts: str | None, tag: PostTag
    ) -> str | None:
        """The ts of this job's card in the thread (without ``thread_ts``: among the channel's
        top-level messages, as a DM's answers are), if Slack has it. Errors propagate: "could
        not look" is not "not there", and must not lead to a second post."""
        if thread_ts is None:
            method = "conversations.history"
            listing = client.conversations_history(
                channel=channel,
                oldest=tag.since,
                inclusive=True,
                limit=_REPLIES_LIMIT,
                include_all_metadata=True,
            )
        else:
            method = "conversations.replies"
            listing = client.conversations_replies(
                channel=channel,
                ts=thread_ts,
                oldest=tag.since,
                inclusive=True,
                limit=_REPLIES_LIMIT,
                include_all_metadata=True,
            )
        try:
            response = await self._call(method, listing)
        except SlackApiError as exc:
            if slack_error(exc) == "thread_not_found":
                return None
            raise
        for message in response.get("messages") or []:
            if tag.matches(message):
                return str(message["ts"])
        return None

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


async def add_working_mark(client: AsyncWebClient, *, channel: str, ts: str) -> bool:
    """A reaction on the asker's message while an answer is being made; whether it is there.

    Best effort: a missing scope or a rate limit must never cost the asker their answer.
    """
    return await _react(client.reactions_add, channel=channel, ts=ts)


async def remove_working_mark(client: AsyncWebClient, *, channel: str, ts: str) -> None:
    """Take the mark off: the answer is posted, or a job that died mid-answer left it there."""
    await _react(client.reactions_remove, channel=channel, ts=ts)


async def _react(method: Any, *, channel: str, ts: str) -> bool:
    try:
        await method(channel=channel, timestamp=ts, name=WORKING_REACTION)
    except SlackApiError as exc:
        # A re-run finds the mark its dead predecessor left: still ours to take off.
        if slack_error(exc) == "already_reacted":
            return True
        logger.info("status reaction skipped: %s", slack_error(exc))
        return False
    except (aiohttp.ClientError, TimeoutError) as exc:
        logger.info("status reaction skipped: %s", type(exc).__name__)
        return False
    return True
