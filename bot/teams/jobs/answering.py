"""The Teams answer jobs, run by the job worker on whichever replica claims them.

``teams.answer`` (a mention, a chat message, the "Ask runbooks" action): resolve the
organisation, show "Searching…", ask, and put the card in place. ``teams.retry`` (the Retry
button): ask a stored question again and replace its card for everyone. Every outcome, failures
included, ends as a card in the conversation, never as exception text; a re-run reuses the
answer an earlier run stored (``answer_for_job``) and the message it posted (``JobCard``).
"""

from __future__ import annotations

import logging

import psycopg
from microsoft_agents.hosting.core import ConnectorClientBase

from bot.core.answers.store import Placement
from bot.core.jobs.answers import answer_for_job
from bot.core.jobs.queue import Job
from bot.teams.bot import TeamsBot
from bot.teams.cards import (
    Json,
    render_answer_gone,
    render_help,
    render_internal_error,
    render_not_connected,
    render_result,
    render_store_unavailable,
)
from bot.teams.jobs.cards import JobCard
from bot.teams.jobs.progress import show_typing
from bot.teams.jobs.requests import ANSWER, RETRY, AnswerRequest, RetryRequest
from bot.teams.tenancy import find_teams_tenant
from bot.teams.threads import thread_root
from rag import AskResult, StoreError

logger = logging.getLogger(__name__)


def register_answer_jobs(bot: TeamsBot) -> None:
    bot.job_handlers.register(ANSWER, AnswerJob(bot))
    bot.job_handlers.register(RETRY, RetryJob(bot))


class AnswerJob:
    def __init__(self, bot: TeamsBot) -> None:
        self.bot = bot

    async def run(self, job: Job) -> None:
        request = AnswerRequest.from_payload(job.payload)

        async def answer(client: ConnectorClientBase) -> None:
            card = JobCard(self.bot, client, job, request.reference)
            await self._answer(job, request, card)

        await self.bot.in_conversation(request.reference, answer)

    async def give_up(self, job: Job) -> None:
        reference = AnswerRequest.from_payload(job.payload).reference

        async def timed_out(client: ConnectorClientBase) -> None:
            await JobCard(self.bot, client, job, reference).give_up()

        await self.bot.in_conversation(reference, timed_out)

    async def _answer(self, job: Job, request: AnswerRequest, card: JobCard) -> None:
        bot, result = self.bot, None
        try:
            tenant = await find_teams_tenant(bot.store, request.aad_tenant)
            if tenant is not None and request.question:
                if request.entry != "mention" and card.activity_id is None:
                    # A mention's own turn showed typing already (``bot.teams.messages``).
                    await show_typing(card.client, card.reference)
                await card.placeholder()
                result = await self._ask(job, request, tenant)
        except Exception as exc:
            await card.show(_failure_card(exc, "answer"))
            return
        if tenant is None:
            await _show(bot, card, render_not_connected(request.aad_tenant), request.entry)
        elif result is None:
            await _show(bot, card, render_help(), request.entry, status="help")
        else:
            await _show_result(bot, card, tenant, result, request.entry)

    async def _ask(self, job: Job, request: AnswerRequest, tenant: str) -> AskResult:
        reference = request.reference
        service = await self.bot.scope(
            tenant,
            workspace_id=request.aad_tenant,
            channel_id=request.channel_id,
            hints=request.hints,
        )
        conversation_id = reference.conversation.id if reference.conversation else None
        placement = Placement(
            entry=request.entry,
            team_id=request.aad_tenant or "",
            enterprise_id="",
            channel_id=request.channel_id,
            thread_ts=thread_root(conversation_id or ""),
            ephemeral=False,
            conversation_id=conversation_id,
            service_url=reference.service_url,
            activity_id=reference.activity_id,
        )
        return await answer_for_job(
            self.bot,
            job,
            tenant,
            request.question,
            service=service,
            placement=placement,
        )


class RetryJob:
    def __init__(self, bot: TeamsBot) -> None:
        self.bot = bot

    async def run(self, job: Job) -> None:
        request = RetryRequest.from_payload(job.payload)

        async def retry(client: ConnectorClientBase) -> None:
            card = JobCard(self.bot, client, job, request.reference, replaces=request.message_id)
            await self._retry(job, request, card)

        await self.bot.in_conversation(request.reference, retry)

    async def give_up(self, job: Job) -> None:
        request = RetryRequest.from_payload(job.payload)

        async def timed_out(client: ConnectorClientBase) -> None:
            card = JobCard(self.bot, client, job, request.reference, replaces=request.message_id)
            await card.give_up()

        await self.bot.in_conversation(request.reference, timed_out)

    async def _retry(self, job: Job, request: RetryRequest, card: JobCard) -> None:
        bot = self.bot
        try:
            stored = await bot.answers.load(request.tenant, request.answer_id)
            if stored is not None:
                result = await answer_for_job(
                    bot,
                    job,
                    stored.tenant,
                    stored.question,
                    service=stored.service,
                    placement=stored.placement,
                )
        except Exception as exc:
            await card.show(_failure_card(exc, "retry"))
            return
        if stored is None:
            await card.show(render_answer_gone())
            return
        await _show_result(bot, card, stored.tenant, result, "retry")


def _failure_card(exc: Exception, what: str) -> Json:
    if isinstance(exc, StoreError | psycopg.OperationalError):
        logger.warning("Teams %s failed, database unavailable: %s", what, type(exc).__name__)
        return render_store_unavailable()
    logger.error("Teams %s failed", what, exc_info=exc)
    return render_internal_error()


async def _show(
    bot: TeamsBot, card: JobCard, content: Json, entry: str, *, status: str = "not_connected"
) -> None:
    if await card.show(content):
        bot.teams_metrics.answers_posted.labels(entry, status).inc()


async def _show_result(
    bot: TeamsBot, card: JobCard, tenant: str, result: AskResult, entry: str
) -> None:
    message_id = await card.show(render_result(result))
    bot.teams_metrics.answers_posted.labels(entry, result.status).inc()
    if message_id and result.answer_id:
        await bot.answers.record_delivery(
            tenant, result.answer_id, message_ts=message_id, ephemeral=False
        )
