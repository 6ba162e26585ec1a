"""Proactive answers to alert posts, in channels that opted in (``runbook channel alerts``).

A new top-level post that announces a firing alert gets one answer card in its thread, marked
as automatic and carrying a "Mute this alert here" button. Silence is the default whenever that
is not clearly wanted: a channel not opted in, a resolved or unclear notification, a post that
is not an alert, a muted alert, the same alert again within the repeat window, an unknown
workspace, and an abstention all post nothing.

Intake queues a post as a ``slack.alert_post`` job when ``firing_alert`` reads it as a firing
alert (no database needed); ``AlertPostJob`` makes every other check and answers, once, on
whichever replica claims it. A job that gives up stays silent too: nobody asked.
"""

from __future__ import annotations

import logging
from typing import Any

from slack_sdk.errors import SlackApiError

from bot.core.alerts.channel_settings import channel_settings
from bot.core.alerts.memory import AlertKey, AlertMemory
from bot.core.answers.store import Placement, delivery_row
from bot.core.jobs.answers import answer_for_job
from bot.core.jobs.queue import Job
from bot.slack.alert_classifier import AlertPost, classify_alert
from bot.slack.alerts import fit_question
from bot.slack.answering import Bot
from bot.slack.delivery.job_replies import ThreadReply, permanent
from bot.slack.delivery.posts import slack_error
from bot.slack.delivery.queued_messages import QueuedMessage, open_message
from bot.slack.listeners.followups import mentions_user
from bot.slack.tenancy import origin_of, tenant_of

logger = logging.getLogger(__name__)


def firing_alert(event: dict[str, Any]) -> AlertPost | None:
    """The firing alert a top-level post announces; None for anything else (resolved, unclear,
    not an alert). Reads the post alone, so intake can ask it before the ack."""
    alert = classify_alert(event)
    return alert if alert is not None and alert.state == "firing" else None


class AlertPostJob:
    def __init__(self, bot: Bot) -> None:
        self.bot = bot
        self.memory = AlertMemory(bot.store, repeat_window_min=bot.settings.alert_repeat_window_min)

    async def run(self, job: Job) -> None:
        message = await open_message(self.bot, job)
        if message is None:
            return
        alert = firing_alert(message.event)
        if alert is None or mentions_user(message.event.get("text"), message.bot_user):
            return  # a mention is its app_mention twin's to answer
        try:
            await self._answer(job, message, alert)
        except SlackApiError as exc:
            if not permanent(exc):
                raise  # 5xx, rate limits: the job runs again, and looks before it posts
            self.bot.metrics.listener_errors.inc()
            logger.warning("alert job %s failed quietly: %s", job.job_id, slack_error(exc))

    async def give_up(self, job: Job) -> None:
        # No "could not answer in time" card on an alert nobody asked about.
        logger.warning("alert job %s gave up; nothing posted", job.job_id)

    async def _answer(self, job: Job, message: QueuedMessage, alert: AlertPost) -> None:
        channel, ts = message.channel, message.ts
        origin = origin_of(message.body)
        tenant = await tenant_of(self.bot.store, origin)
        team = origin.team_id or ""
        if (
            tenant is None
            or not (await channel_settings(self.bot.store, tenant, team, channel)).alerts
        ):
            return
        key = AlertKey(tenant, team, channel, alert.fingerprint, alert.name)
        claimed = not await self.memory.is_muted(key) and await self.memory.claim(
            key, job.job_id, answer_id=job.answer_id
        )
        if not claimed:
            logger.info("alert %s in %s: muted or repeated, not answered", key.fingerprint, channel)
            return
        question = fit_question(alert.text.question, self.bot.settings.max_question_chars)
        placement = Placement(
            entry="alert",
            team_id=team,
            enterprise_id=origin.enterprise_id or "",
            channel_id=channel,
            thread_ts=ts,
            ephemeral=False,
        )
        service = await self.bot.scope_for(tenant, origin, alert.scope_hints())
        result = await answer_for_job(
            self.bot, job, tenant, question, service=service, placement=placement
        )
        if result.status != "answered":
            self.bot.metrics.answers_posted.labels("alert", "silent").inc()
            return
        card = self.bot.card(result, entry="alert", question=question, ephemeral=False)
        reply = ThreadReply(self.bot, message.client, job, channel, ts, since=ts)
        # A re-run finds the card an earlier run posted, and records it again (idempotent).
        message_ts = await reply.send(card, answer_id=result.answer_id, look_first=True)
        self.bot.metrics.answers_posted.labels("alert", result.status).inc()
        await self.memory.record_answer(key, str(result.answer_id))
        # Recorded with the job's end, in its transaction.
        job.pending.append(
            delivery_row(tenant, str(result.answer_id), message_ts=message_ts, ephemeral=False)
        )
