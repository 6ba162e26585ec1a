"""The ``message`` listener: routes each message event to the one entry that may answer it.

Slack sends every message in the channels the bot is in (``message.channels``,
``message.groups``) and in its DMs (``message.im``). Most are none of the bot's business and get
nothing. The routes:

- a DM → ``answer_direct_message``;
- a message that mentions the bot → nothing here: its ``app_mention`` twin was queued at intake
  (deduplicated on its own event id) and is answered there, once, whichever copy came first;
- a person's reply in a thread → ``answer_follow_up`` (it decides whether the bot follows it);
- a top-level post → ``answer_alert_post`` (it decides whether it is an alert worth answering).

Edits, deletions, joins and other subtypes are ignored; so is anything the bot posted itself
(Bolt drops those already; checked again here because a reply loop is the worst failure).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable
from typing import Any

import aiohttp
import psycopg
from slack_bolt.async_app import AsyncApp, AsyncBoltContext
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.core.alert_memory import AlertMemory
from bot.slack.alert_posts import answer_alert_post
from bot.slack.answering import Bot
from bot.slack.direct_messages import answer_direct_message
from bot.slack.followups import answer_follow_up, mentions_user
from rag import StoreError

logger = logging.getLogger(__name__)

# Plain messages, integrations' posts, replies also sent to the channel, and files with text.
_ROUTED_SUBTYPES = frozenset({None, "bot_message", "thread_broadcast", "file_share"})
# Failures of an answer nobody explicitly asked for are logged, never shown as an error card.
_QUIET_FAILURES = (StoreError, psycopg.Error, SlackApiError, aiohttp.ClientError, TimeoutError)


def register_message_events(app: AsyncApp, bot: Bot) -> None:
    """Register before any catch-all event listener (Bolt runs the first that matches)."""
    memory = AlertMemory(bot.store, repeat_window_min=bot.settings.alert_repeat_window_min)
    app.event("message")(MessageRouter(bot, memory).handle)


class MessageRouter:
    def __init__(self, bot: Bot, memory: AlertMemory) -> None:
        self.bot = bot
        self.memory = memory

    async def handle(
        self,
        event: dict[str, Any],
        body: dict[str, Any],
        client: AsyncWebClient,
        context: AsyncBoltContext,
    ) -> None:
        self.bot.tasks.adopt_current()
        if event.get("subtype") not in _ROUTED_SUBTYPES or _is_own(event, context):
            return
        bot_user = context.bot_user_id or ""
        ts, thread_ts = event.get("ts"), event.get("thread_ts")
        if event.get("channel_type") == "im":
            await answer_direct_message(self.bot, client, body, event, bot_user)
        elif mentions_user(event.get("text"), bot_user):
            return
        elif thread_ts and thread_ts != ts:
            await self._quietly(answer_follow_up(self.bot, client, body, event, bot_user), body)
        else:
            alert = answer_alert_post(self.bot, self.memory, client, body, event)
            await self._quietly(alert, body)

    async def _quietly(self, answering: Awaitable[None], body: dict[str, Any]) -> None:
        try:
            await answering
        except _QUIET_FAILURES as exc:
            self.bot.metrics.listener_errors.inc()
            logger.warning(
                "unprompted answer to %s failed quietly: %s",
                body.get("event_id"),
                type(exc).__name__,
                exc_info=exc,
            )


def _is_own(event: dict[str, Any], context: AsyncBoltContext) -> bool:
    return (event.get("user") is not None and event.get("user") == context.bot_user_id) or (
        event.get("bot_id") is not None and event.get("bot_id") == context.bot_id
    )
