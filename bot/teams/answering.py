"""The answer job: resolve the organisation, show "Searching…", ask, and put the card in place.

Runs after the request was acknowledged (``run_in_background``); every outcome, failures
included, ends as a card in the conversation, never as exception text.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import psycopg
from microsoft_agents.activity import ConversationReference
from microsoft_agents.hosting.core import ConnectorClientBase

from bot.core.answers_store import Entry, Placement, StoredAnswer
from bot.teams.bot import TeamsBot, run_in_background
from bot.teams.cards import (
    Json,
    render_help,
    render_internal_error,
    render_not_connected,
    render_result,
    render_searching,
    render_store_unavailable,
)
from bot.teams.delivery import ConnectorError
from bot.teams.tenancy import find_teams_tenant
from bot.teams.threads import thread_root
from rag import AskResult, StoreError

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class AnswerJob:
    """One question to answer into one conversation (a channel thread, a chat)."""

    reference: ConversationReference
    aad_tenant: str | None
    channel_id: str | None
    question: str
    hints: tuple[str, ...]
    entry: Entry


def start_answer(bot: TeamsBot, job: AnswerJob) -> None:
    run_in_background(bot.tasks, bot.in_conversation(job.reference, _Answer(bot, job).run))


def start_retry(
    bot: TeamsBot, reference: ConversationReference, stored: StoredAnswer, message_id: str | None
) -> None:
    """Ask a stored question again and replace its card (``message_id``) with the new one."""
    retry = _Retry(bot, reference, stored, message_id)
    run_in_background(bot.tasks, bot.in_conversation(reference, retry.run))


class _Answer:
    def __init__(self, bot: TeamsBot, job: AnswerJob) -> None:
        self.bot, self.job = bot, job

    async def run(self, client: ConnectorClientBase) -> None:
        bot, job = self.bot, self.job
        placeholder: str | None = None
        try:
            tenant = await find_teams_tenant(bot.store, job.aad_tenant)
            if tenant is None:
                await self._post(client, render_not_connected(job.aad_tenant), "not_connected")
                return
            if not job.question:
                await self._post(client, render_help(), "help")
                return
            placeholder = await _placeholder(bot, client, job.reference)
            result = await self._ask(tenant)
        except (StoreError, psycopg.OperationalError) as exc:
            logger.warning("Teams answer failed, database unavailable: %s", type(exc).__name__)
            await _finish(bot, client, self.job.reference, render_store_unavailable(), placeholder)
            return
        except Exception:
            logger.exception("Teams answer failed")
            await _finish(bot, client, self.job.reference, render_internal_error(), placeholder)
            return
        message_id = await _finish(bot, client, job.reference, render_result(result), placeholder)
        bot.teams_metrics.answers_posted.labels(job.entry, result.status).inc()
        if message_id and result.answer_id:
            await bot.answers.record_delivery(
                tenant, result.answer_id, message_ts=message_id, ephemeral=False
            )

    async def _ask(self, tenant: str) -> AskResult:
        job = self.job
        service = await self.bot.scope(
            tenant, workspace_id=job.aad_tenant, channel_id=job.channel_id, hints=job.hints
        )
        conversation = job.reference.conversation
        conversation_id = conversation.id if conversation else None
        placement = Placement(
            entry=job.entry,
            team_id=job.aad_tenant or "",
            enterprise_id="",
            channel_id=job.channel_id,
            thread_ts=thread_root(conversation_id or ""),
            ephemeral=False,
            conversation_id=conversation_id,
            service_url=job.reference.service_url,
            activity_id=job.reference.activity_id,
        )
        return await self.bot.ask(tenant, job.question, service=service, placement=placement)

    async def _post(self, client: ConnectorClientBase, card: Json, status: str) -> None:
        try:
            await self.bot.delivery.post(client, self.job.reference, card)
        except ConnectorError:
            return  # counted and logged by the delivery; nowhere else to show it
        self.bot.teams_metrics.answers_posted.labels(self.job.entry, status).inc()


class _Retry:
    def __init__(
        self,
        bot: TeamsBot,
        reference: ConversationReference,
        stored: StoredAnswer,
        message_id: str | None,
    ) -> None:
        self.bot, self.reference, self.stored, self.message_id = bot, reference, stored, message_id

    async def run(self, client: ConnectorClientBase) -> None:
        bot, stored = self.bot, self.stored
        try:
            result = await bot.ask(
                stored.tenant, stored.question, service=stored.service, placement=stored.placement
            )
        except (StoreError, psycopg.OperationalError) as exc:
            logger.warning("Teams retry failed, database unavailable: %s", type(exc).__name__)
            await _finish(bot, client, self.reference, render_store_unavailable(), self.message_id)
            return
        except Exception:
            logger.exception("Teams retry failed")
            await _finish(bot, client, self.reference, render_internal_error(), self.message_id)
            return
        card = render_result(result)
        message_id = await _finish(bot, client, self.reference, card, self.message_id)
        bot.teams_metrics.answers_posted.labels("retry", result.status).inc()
        if message_id and result.answer_id:
            await bot.answers.record_delivery(
                stored.tenant, result.answer_id, message_ts=message_id, ephemeral=False
            )


async def _placeholder(
    bot: TeamsBot, client: ConnectorClientBase, reference: ConversationReference
) -> str | None:
    """A "Searching runbooks…" card to update in place; the answer is posted anyway without."""
    try:
        return await bot.delivery.post(client, reference, render_searching()) or None
    except ConnectorError:
        return None


async def _finish(
    bot: TeamsBot,
    client: ConnectorClientBase,
    reference: ConversationReference,
    card: Json,
    placeholder: str | None,
) -> str | None:
    try:
        return await bot.delivery.show(client, reference, card, placeholder=placeholder)
    except ConnectorError:
        return None
