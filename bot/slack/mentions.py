"""``@runbook-bot …`` in a channel: one answer card in the mention's thread.

A bare mention inside a thread asks about the thread's root message (typically an alert). Bolt
acks the event before this runs, so the work here may take as long as the answer does.
"""

from __future__ import annotations

import logging
import re
from typing import Any, TypeGuard

import aiohttp
from slack_bolt.async_app import AsyncApp, AsyncBoltContext
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.core.answers_store import Placement
from bot.slack.alerts import AlertText, fit_question, read_message
from bot.slack.answering import Bot, render
from bot.slack.blocks import render_not_connected, render_usage
from bot.slack.progress import visible_progress
from bot.slack.tenancy import origin_of, tenant_of

logger = logging.getLogger(__name__)


def register_mentions(app: AsyncApp, bot: Bot) -> None:
    app.event("app_mention")(MentionListener(bot).handle)
    # Registered after every other event listener: an event type nothing handles is acked with
    # a 200 and dropped. Bolt would answer 404, which Slack retries and, if it keeps happening,
    # answers by disabling the app's event subscriptions.
    app.event(re.compile(r".*"))(ignore_event)


async def ignore_event(event: dict[str, Any]) -> None:
    logger.debug("ignored event of type %r", event.get("type"))


def strip_mention(text: str, bot_user_id: str | None) -> str:
    """The question without the bot's own ``<@U…>`` (other mentions stay: they may matter)."""
    if bot_user_id:
        text = re.sub(rf"<@{re.escape(bot_user_id)}(?:\|[^>]*)?>", " ", text)
    return " ".join(text.split())


class MentionListener:
    def __init__(self, bot: Bot) -> None:
        self.bot = bot

    async def handle(
        self,
        event: dict[str, Any],
        body: dict[str, Any],
        client: AsyncWebClient,
        context: AsyncBoltContext,
    ) -> None:
        self.bot.tasks.adopt_current()
        channel, ts, text = event.get("channel"), event.get("ts"), event.get("text") or ""
        thread_ts = event.get("thread_ts") or ts
        if not (_id(channel) and _id(ts) and _id(thread_ts) and isinstance(text, str)):
            # Not a shape Slack sends: there is nowhere to reply, so nothing to do.
            logger.warning("ignored a malformed app_mention %s", body.get("event_id"))
            return
        origin = origin_of(body)
        delivery = self.bot.delivery
        tenant = await tenant_of(self.bot.store, origin)
        if tenant is None:
            card = render_not_connected(team_id=origin.team_id, enterprise_id=origin.enterprise_id)
            await delivery.post(client, channel=channel, thread_ts=thread_ts, card=card)
            return
        question = strip_mention(text, context.bot_user_id)
        hints: tuple[str, ...] = ()
        if not question and event.get("thread_ts"):
            root = await self._thread_root(client, channel, event["thread_ts"])
            question = fit_question(root.question, self.bot.settings.max_question_chars)
            hints = root.hints
        if not question:
            await delivery.post(client, channel=channel, thread_ts=thread_ts, card=render_usage())
            return
        placement = Placement(
            entry="mention",
            team_id=origin.team_id or "",
            enterprise_id=origin.enterprise_id or "",
            channel_id=channel,
            thread_ts=thread_ts,
            ephemeral=False,
            response_url=None,
        )
        async with visible_progress(client, channel=channel, ts=ts, thread_ts=thread_ts):
            service = await self.bot.scope_for(tenant, origin, hints)
            result = await self.bot.ask(tenant, question, service=service, placement=placement)
            card = render(result, entry="mention", question=question, ephemeral=False)
            message_ts = await delivery.post(
                client, channel=channel, thread_ts=thread_ts, card=card
            )
        self.bot.metrics.answers_posted.labels("mention", result.status).inc()
        await self.bot.answers.record_delivery(
            tenant, str(result.answer_id), message_ts=message_ts, ephemeral=False
        )

    async def _thread_root(self, client: AsyncWebClient, channel: str, thread_ts: str) -> AlertText:
        """The thread's first message, read once (conversations.replies is tightly rate-limited)."""
        try:
            response = await client.conversations_replies(channel=channel, ts=thread_ts, limit=1)
        except (SlackApiError, aiohttp.ClientError, TimeoutError) as exc:
            logger.info("thread root unreadable: %s", type(exc).__name__)
            return AlertText(question="", hints=())
        messages = response.get("messages") or []
        return read_message(messages[0]) if messages else AlertText(question="", hints=())


def _id(value: object) -> TypeGuard[str]:
    return isinstance(value, str) and bool(value)
