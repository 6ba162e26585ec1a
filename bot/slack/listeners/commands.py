"""``/runbook <question>``: a private answer through the command's response_url;
``/runbook sources``: the tenant's runbook sources and their last syncs.

The listener queues a ``slack.command`` job, then acks with a "searching" placeholder, which
the answer replaces (``replace_original``: a re-run replaces it again, never adds a second).
Works in channels the bot has not joined, since response_url needs no membership; once the
response_url has expired, the answer comes as a DM instead.
"""

from __future__ import annotations

import logging
from typing import Any

from slack_bolt.async_app import AsyncAck, AsyncApp, AsyncBoltContext

from bot.core.answers.store import Placement
from bot.core.jobs.answers import answer_for_job
from bot.core.jobs.queue import Job
from bot.slack.answering import Bot
from bot.slack.blocks import Card, render_searching, render_timed_out, render_usage
from bot.slack.blocks.source_status import render_source_status
from bot.slack.delivery.job_replies import COMMAND, PrivateReply, queue_request
from bot.slack.tenancy import not_connected_card, origin_of, tenant_of
from rag import list_sources

logger = logging.getLogger(__name__)

COMMAND_NAME = "/runbook"
_HELP_WORDS = frozenset({"", "help", "?", "-h", "--help"})
# `/runbook sources`: the tenant's runbook sources and their last syncs, not a question.
SOURCES_WORD = "sources"


def register_commands(app: AsyncApp, bot: Bot) -> None:
    app.command(COMMAND_NAME)(CommandListener(bot).handle)
    bot.job_handlers.register(COMMAND, CommandJob(bot))


def question_of(command: dict[str, Any]) -> str:
    return " ".join((command.get("text") or "").split())


class CommandListener:
    def __init__(self, bot: Bot) -> None:
        self.bot = bot

    async def handle(
        self,
        ack: AsyncAck,
        command: dict[str, Any],
        body: dict[str, Any],
        context: AsyncBoltContext,
    ) -> None:
        self.bot.tasks.adopt_current()
        if question_of(command).lower() in _HELP_WORDS:
            usage = render_usage()
            await ack(text=usage.text, blocks=usage.blocks)
            return
        if question_of(command).lower() == SOURCES_WORD:
            card = await self._sources_card(body, context)
            await ack(text=card.text, blocks=card.blocks)
            return
        await queue_request(self.bot, COMMAND, body.get("trigger_id"), body, context)
        searching = render_searching()
        await ack(text=searching.text, blocks=searching.blocks)

    async def _sources_card(self, body: dict[str, Any], context: AsyncBoltContext) -> Card:
        """The tenant's sources, in the ack itself (ephemeral): two small reads, no job."""
        origin = origin_of(body, context)
        tenant = await tenant_of(self.bot.store, origin)
        if tenant is None:
            return not_connected_card(origin)
        return render_source_status(tenant, await list_sources(self.bot.store, tenant=tenant))


class CommandJob:
    def __init__(self, bot: Bot) -> None:
        self.bot = bot

    async def run(self, job: Job) -> None:
        body = job.payload
        reply = await self._reply(job)
        origin = origin_of(body)
        tenant = await tenant_of(self.bot.store, origin)
        if tenant is None:
            await reply.send(not_connected_card(origin), replace_original=True)
            return
        question = question_of(body)
        placement = Placement(
            entry="command",
            team_id=origin.team_id or "",
            enterprise_id=origin.enterprise_id or "",
            channel_id=origin.channel_id,
            thread_ts=None,
            ephemeral=True,
        )
        service = await self.bot.scope_for(tenant, origin)
        result = await answer_for_job(
            self.bot, job, tenant, question, service=service, placement=placement
        )
        card = self.bot.card(result, entry="command", question=question, ephemeral=True)
        await reply.send(card, replace_original=True)
        self.bot.metrics.answers_posted.labels("command", result.status).inc()

    async def give_up(self, job: Job) -> None:
        await (await self._reply(job)).send(render_timed_out(), replace_original=True)

    async def _reply(self, job: Job) -> PrivateReply:
        body = job.payload
        client = await self.bot.clients.for_request(body)
        return PrivateReply(
            self.bot, client, job, body.get("response_url"), _str(body.get("user_id"))
        )


def _str(value: object) -> str | None:
    return value if isinstance(value, str) and value else None
