"""The "Ask runbooks" message shortcut on an alert post: the answer goes in the alert's thread.

The question is the whole alert (text, attachments, blocks); its service label scopes retrieval
when the tenant has runbooks for that service. If the bot may not post in the channel, the
answer comes back privately through the shortcut's response_url instead.
"""

from __future__ import annotations

from typing import Any

from slack_bolt.async_app import AsyncAck, AsyncApp, AsyncRespond
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.core.answers_store import Placement
from bot.slack.alerts import fit_question, read_message
from bot.slack.answering import Bot, render
from bot.slack.blocks import render_not_connected, render_usage
from bot.slack.delivery import UNREACHABLE_CHANNEL, slack_error
from bot.slack.progress import visible_progress
from bot.slack.tenancy import origin_of, tenant_of

CALLBACK_ID = "ask_runbooks"


def register_shortcuts(app: AsyncApp, bot: Bot) -> None:
    app.shortcut(CALLBACK_ID)(ShortcutListener(bot).handle)


class ShortcutListener:
    def __init__(self, bot: Bot) -> None:
        self.bot = bot

    async def handle(
        self, ack: AsyncAck, body: dict[str, Any], client: AsyncWebClient, respond: AsyncRespond
    ) -> None:
        self.bot.tasks.adopt_current()
        await ack()
        origin = origin_of(body)
        delivery = self.bot.delivery
        tenant = await tenant_of(self.bot.store, origin)
        if tenant is None:
            card = render_not_connected(team_id=origin.team_id, enterprise_id=origin.enterprise_id)
            await delivery.respond(respond, card)
            return
        message: dict[str, Any] = body.get("message") or {}
        alert = read_message(message)
        question = fit_question(alert.question, self.bot.settings.max_question_chars)
        if not question or origin.channel_id is None:
            await delivery.respond(respond, render_usage())
            return
        channel, message_ts = origin.channel_id, str(message["ts"])
        thread_ts = message.get("thread_ts") or message_ts
        placement = Placement(
            entry="shortcut",
            team_id=origin.team_id or "",
            enterprise_id=origin.enterprise_id or "",
            channel_id=channel,
            thread_ts=thread_ts,
            ephemeral=False,
            response_url=body.get("response_url"),
        )
        posted_ts: str | None = None
        async with visible_progress(client, channel=channel, ts=message_ts, thread_ts=thread_ts):
            service = await self.bot.scope_for(tenant, origin, alert.hints)
            result = await self.bot.ask(tenant, question, service=service, placement=placement)
            try:
                card = render(result, entry="shortcut", question=question, ephemeral=False)
                posted_ts = await delivery.post(
                    client, channel=channel, thread_ts=thread_ts, card=card
                )
            except SlackApiError as exc:
                if slack_error(exc) not in UNREACHABLE_CHANNEL:
                    raise
                card = render(result, entry="shortcut", question=question, ephemeral=True)
                await delivery.respond(respond, card)
        self.bot.metrics.answers_posted.labels("shortcut", result.status).inc()
        await self.bot.answers.record_delivery(
            tenant, str(result.answer_id), message_ts=posted_ts, ephemeral=posted_ts is None
        )
