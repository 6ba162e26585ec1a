"""One answer per Slack message, however many ways it arrives.

A message that mentions the bot in a channel comes twice, as ``app_mention`` and as ``message``
(``message.channels``), under two event ids. Whichever arrives first claims the message by its
workspace, channel and ts (durably, in the same set-if-absent store as event ids, so another
replica drops the second copy too); the other is acked and dropped.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

from slack_bolt.async_app import AsyncBoltContext
from slack_bolt.response import BoltResponse

from bot.core.dedupe import EventDeduper

logger = logging.getLogger(__name__)


def mentions_user(text: object, user_id: str | None) -> bool:
    return bool(user_id) and isinstance(text, str) and f"<@{user_id}" in text


def message_key(body: dict[str, Any], context: AsyncBoltContext) -> str | None:
    """The claim key of a delivery that would be answered as a mention, else None."""
    event = body.get("event") if body.get("type") == "event_callback" else None
    if not isinstance(event, dict):
        return None
    kind = event.get("type")
    if kind == "message":
        # DMs never come as app_mention; other messages are answered as mentions only when
        # they mention the bot.
        if event.get("channel_type") == "im" or not mentions_user(
            event.get("text"), context.bot_user_id
        ):
            return None
    elif kind != "app_mention":
        return None
    channel, ts = event.get("channel"), event.get("ts")
    if not (isinstance(channel, str) and isinstance(ts, str)):
        return None
    team = body.get("team_id") or event.get("team") or ""
    return f"msg:{team}:{channel}:{ts}"


def build_message_once_middleware(
    deduper: EventDeduper,
) -> Callable[..., Awaitable[BoltResponse | None]]:
    async def message_once(
        body: dict[str, Any], context: AsyncBoltContext, next_: Callable[[], Awaitable[None]]
    ) -> BoltResponse | None:
        key = message_key(body, context)
        if key is not None and not await deduper.first_delivery(key):
            logger.info("dropped the second delivery of message %s", body.get("event_id"))
            return BoltResponse(status=200, body="")
        await next_()
        return None

    return message_once
