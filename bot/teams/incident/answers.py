"""The incident channel's jobs in Teams: alert posts answered unprompted and follow-up questions
in threads the bot answered, each opt-in per channel (``runbook teams channel alerts|follow-ups``).

The same rules as Slack's, from the same core: the channel switches (``channel_settings``), the
alert repeat window and mutes (``AlertMemory``), the followed threads (``followed_thread``), the
stored answer a re-run reuses (``answer_for_job``). Silence whenever an answer was not clearly
wanted: an unknown organisation, a channel not switched on, a resolved, muted or repeated alert,
a thread the bot never answered or was asked to stop following, and any outcome other than an
answer. Progress is Teams' typing indicator only (nothing to take back when the job ends silent);
a re-run updates the card an earlier run posted (``JobCard``). A job that gives up posts nothing.
"""

from __future__ import annotations

import logging

from microsoft_agents.hosting.core import ConnectorClientBase

from bot.core.alerts.channel_settings import channel_settings
from bot.core.alerts.classifier import AlertPost, AlertText, classify_alert_text
from bot.core.alerts.memory import AlertKey, AlertMemory
from bot.core.alerts.threads import ThreadTopic, followed_thread
from bot.core.answers.store import Entry, Placement
from bot.core.jobs.answers import answer_for_job
from bot.core.jobs.queue import Job
from bot.teams.bot import TeamsBot
from bot.teams.cards import render_result
from bot.teams.cards.incident import add_stop_following, mark_automatic
from bot.teams.incident.channel_requests import ALERT_POST, FOLLOW_UP, ChannelPostRequest
from bot.teams.jobs.cards import JobCard
from bot.teams.jobs.progress import show_typing
from bot.teams.message_action import fit_question
from bot.teams.tenancy import find_teams_tenant

logger = logging.getLogger(__name__)


def register_incident_jobs(bot: TeamsBot) -> None:
    bot.job_handlers.register(ALERT_POST, AlertPostJob(bot))
    bot.job_handlers.register(FOLLOW_UP, FollowUpJob(bot))


class AlertPostJob:
    def __init__(self, bot: TeamsBot) -> None:
        self.bot = bot
        self.memory = AlertMemory(bot.store, repeat_window_min=bot.settings.alert_repeat_window_min)

    async def run(self, job: Job) -> None:
        request = ChannelPostRequest.from_payload(job.payload)
        alert = classify_alert_text(AlertText(request.text, request.hints))
        if alert is None or alert.state != "firing":
            return
        aad, channel = request.aad_tenant or "", request.channel_id
        tenant = await find_teams_tenant(self.bot.store, aad)
        if (
            tenant is None
            or not (await channel_settings(self.bot.store, tenant, aad, channel)).alerts
        ):
            return
        key = AlertKey(tenant, aad, channel, alert.fingerprint, alert.name)
        claimed = not await self.memory.is_muted(key) and await self.memory.claim(
            key, job.job_id, answer_id=job.answer_id
        )
        if not claimed:
            logger.info("alert %s in %s: muted or repeated, not answered", key.fingerprint, channel)
            return

        async def answer(client: ConnectorClientBase) -> None:
            await self._answer(
                job, request, JobCard(self.bot, client, job, request.reference), key, alert
            )

        await self.bot.in_conversation(request.reference, answer)

    async def give_up(self, job: Job) -> None:
        # No "could not answer in time" card on an alert nobody asked about.
        logger.warning("Teams alert job %s gave up; nothing posted", job.job_id)

    async def _answer(
        self, job: Job, request: ChannelPostRequest, card: JobCard, key: AlertKey, alert: AlertPost
    ) -> None:
        bot = self.bot
        if card.activity_id is None:
            await show_typing(card.client, card.reference)
        question = fit_question(alert.text.question, bot.settings.max_question_chars)
        service = await bot.scope(
            key.tenant,
            workspace_id=key.team_id,
            channel_id=key.channel_id,
            hints=alert.scope_hints(),
        )
        result = await answer_for_job(
            bot,
            job,
            key.tenant,
            question,
            service=service,
            placement=thread_placement("alert", request),
        )
        if result.status != "answered" or result.answer_id is None:
            bot.teams_metrics.answers_posted.labels("alert", "silent").inc()
            return
        shown = await card.show(mark_automatic(render_result(result), result.answer_id))
        if shown is None:
            return
        bot.teams_metrics.answers_posted.labels("alert", result.status).inc()
        await self.memory.record_answer(key, result.answer_id)
        await bot.answers.record_delivery(
            key.tenant, result.answer_id, message_ts=shown, ephemeral=False
        )


class FollowUpJob:
    def __init__(self, bot: TeamsBot) -> None:
        self.bot = bot

    async def run(self, job: Job) -> None:
        request = ChannelPostRequest.from_payload(job.payload)
        store, aad, channel = self.bot.store, request.aad_tenant or "", request.channel_id
        tenant = await find_teams_tenant(store, aad)
        if tenant is None or not (await channel_settings(store, tenant, aad, channel)).follow_ups:
            return
        topic = await followed_thread(store, tenant, aad, channel, request.thread_root)
        if topic is None:
            return

        async def answer(client: ConnectorClientBase) -> None:
            card = JobCard(self.bot, client, job, request.reference)
            await self._answer(job, request, card, tenant, topic)

        await self.bot.in_conversation(request.reference, answer)

    async def give_up(self, job: Job) -> None:
        logger.warning("Teams follow-up job %s gave up; nothing posted", job.job_id)

    async def _answer(
        self, job: Job, request: ChannelPostRequest, card: JobCard, tenant: str, topic: ThreadTopic
    ) -> None:
        bot = self.bot
        if card.activity_id is None:
            await show_typing(card.client, card.reference)
        # The thread's first question rides along: "what about the replica?" means little alone.
        question = fit_question(
            f"{request.text}\n{topic.question}", bot.settings.max_question_chars
        )
        result = await answer_for_job(
            bot,
            job,
            tenant,
            question,
            service=topic.service,
            placement=thread_placement("follow_up", request),
            keep_unanswered=False,  # silent on it: nothing of it is kept either
        )
        if result.status != "answered" or result.answer_id is None:
            bot.teams_metrics.answers_posted.labels("follow_up", "silent").inc()
            return
        shown = await card.show(add_stop_following(render_result(result), result.answer_id))
        if shown is None:
            return
        bot.teams_metrics.answers_posted.labels("follow_up", result.status).inc()
        await bot.answers.record_delivery(
            tenant, result.answer_id, message_ts=shown, ephemeral=False
        )


def thread_placement(entry: Entry, request: ChannelPostRequest) -> Placement:
    """Where the answer lives: the channel thread (its root is what follow-ups look up)."""
    reference = request.reference
    return Placement(
        entry=entry,
        team_id=request.aad_tenant or "",
        enterprise_id="",
        channel_id=request.channel_id,
        thread_ts=request.thread_root,
        ephemeral=False,
        conversation_id=reference.conversation.id if reference.conversation else None,
        service_url=reference.service_url,
        activity_id=request.thread_root,
    )
