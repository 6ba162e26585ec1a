"""``/runbook <question>``: a private answer through the command's response_url.

Acked at once with a "searching" placeholder, which the answer then replaces; works in channels
the bot has not joined, since response_url needs no membership.
"""

from __future__ import annotations

from typing import Any

from slack_bolt.async_app import AsyncAck, AsyncApp, AsyncBoltContext, AsyncRespond

from bot.core.answers_store import Placement
from bot.slack.answering import Bot, render
from bot.slack.blocks import render_searching, render_usage
from bot.slack.tenancy import not_connected_card, origin_of, tenant_of

COMMAND = "/runbook"
_HELP_WORDS = frozenset({"", "help", "?", "-h", "--help"})


def register_commands(app: AsyncApp, bot: Bot) -> None:
    app.command(COMMAND)(CommandListener(bot).handle)


class CommandListener:
    def __init__(self, bot: Bot) -> None:
        self.bot = bot

    async def handle(
        self,
        ack: AsyncAck,
        command: dict[str, Any],
        body: dict[str, Any],
        respond: AsyncRespond,
        context: AsyncBoltContext,
    ) -> None:
        self.bot.tasks.adopt_current()
        question = " ".join((command.get("text") or "").split())
        if question.lower() in _HELP_WORDS:
            usage = render_usage()
            await ack(text=usage.text, blocks=usage.blocks)
            return
        searching = render_searching()
        await ack(text=searching.text, blocks=searching.blocks)
        origin = origin_of(body, context)
        delivery = self.bot.delivery
        tenant = await tenant_of(self.bot.store, origin)
        if tenant is None:
            await delivery.respond(respond, not_connected_card(origin), replace_original=True)
            return
        placement = Placement(
            entry="command",
            team_id=origin.team_id or "",
            enterprise_id=origin.enterprise_id or "",
            channel_id=origin.channel_id,
            thread_ts=None,
            ephemeral=True,
        )
        service = await self.bot.scope_for(tenant, origin)
        result = await self.bot.ask(tenant, question, service=service, placement=placement)
        card = render(
            result,
            entry="command",
            question=question,
            ephemeral=True,
            stale_after_days=self.bot.settings.stale_after_days,
        )
        await delivery.respond(respond, card, replace_original=True)
        self.bot.metrics.answers_posted.labels("command", result.status).inc()
