"""Thread follow-ups without a mention: a person's question in a thread the bot answered in.

Opt-in per channel (``runbook channel follow-ups TEAM CHANNEL on``), and quiet where unsure.
Only a message that reads as a question (a question mark, or a question word first) gets an
answer; one addressed to someone else (``<@U…>`` of another person), thanks, acknowledgements
and emoji get nothing, as does an abstention (of which nothing is stored: no answer row, no
facts, no trace), a thread the bot never answered, one it was asked to stop following, and a
channel that has not switched follow-ups on.
The thread's first question (or alert) rides along as retrieval context: "what about the
replica?" means little on its own.

Intake queues a thread reply as a ``slack.follow_up`` job when ``is_follow_up_question`` reads
it as one (no database needed); ``FollowUpJob`` checks the channel and the thread and answers,
once, on whichever replica claims it.
"""

from __future__ import annotations

import logging
import re
from typing import Any

from slack_sdk.errors import SlackApiError

from bot.core.alerts.channel_settings import channel_settings
from bot.core.alerts.followup_rules import reads_as_question
from bot.core.alerts.threads import followed_thread
from bot.core.answers.store import Placement, delivery_row
from bot.core.jobs.answers import answer_for_job
from bot.core.jobs.queue import Job
from bot.slack.alerts import fit_question
from bot.slack.answering import Bot
from bot.slack.delivery.job_replies import ThreadReply, permanent
from bot.slack.delivery.posts import remove_working_mark, slack_error
from bot.slack.delivery.progress import visible_progress
from bot.slack.delivery.queued_messages import QueuedMessage, open_message
from bot.slack.tenancy import origin_of, tenant_of

logger = logging.getLogger(__name__)

_USER_MENTION = re.compile(r"<@([UW][A-Z0-9_]+)(?:\|[^>]*)?>")


def reads_as_question_to_bot(text: str, bot_user_id: str | None) -> bool:
    """A person's thread reply the bot should take as a question to itself."""
    others = {u for u in _USER_MENTION.findall(text) if u != bot_user_id}
    if others:
        return False  # addressed to someone else (or to several people)
    return reads_as_question(_USER_MENTION.sub(" ", text))


def is_follow_up_question(event: dict[str, Any], bot_user: str | None) -> bool:
    """A person's thread reply that reads as a question to the bot, from the event alone (so
    intake can ask it before the ack; whether the bot follows the thread is the job's check)."""
    text, user = event.get("text"), event.get("user")
    channel, ts, thread_ts = event.get("channel"), event.get("ts"), event.get("thread_ts")
    if event.get("bot_id") or not (isinstance(text, str) and isinstance(user, str)):
        return False  # follow-ups come from people
    if not (isinstance(channel, str) and isinstance(ts, str) and isinstance(thread_ts, str)):
        return False
    return not mentions_user(text, bot_user) and reads_as_question_to_bot(text, bot_user)


class FollowUpJob:
    """Answers a queued follow-up if the bot follows its thread; otherwise, on abstention, and
    when it gives up, it stays silent (only the 🔍 mark a dead run left is taken off)."""

    def __init__(self, bot: Bot) -> None:
        self.bot = bot

    async def run(self, job: Job) -> None:
        message = await open_message(self.bot, job)
        if message is None or not is_follow_up_question(message.event, message.bot_user):
            return
        try:
            await self._answer(job, message)
        except SlackApiError as exc:
            if not permanent(exc):
                raise  # 5xx, rate limits: the job runs again, and looks before it posts
            self.bot.metrics.listener_errors.inc()
            logger.warning("follow-up job %s failed quietly: %s", job.job_id, slack_error(exc))

    async def give_up(self, job: Job) -> None:
        message = await open_message(self.bot, job)
        if message is not None:
            await remove_working_mark(message.client, channel=message.channel, ts=message.ts)

    async def _answer(self, job: Job, message: QueuedMessage) -> None:
        event, client, channel, ts = message.event, message.client, message.channel, message.ts
        text, thread_ts = str(event["text"]), str(event["thread_ts"])
        origin = origin_of(message.body)
        tenant = await tenant_of(self.bot.store, origin)
        team = origin.team_id or ""
        store = self.bot.store
        if tenant is None or not (await channel_settings(store, tenant, team, channel)).follow_ups:
            return
        topic = await followed_thread(store, tenant, team, channel, thread_ts)
        if topic is None:
            return
        reply = ThreadReply(self.bot, client, job, channel, thread_ts, since=ts)
        if await reply.already_posted() is not None:
            return
        asked = " ".join(text.split())
        question = fit_question(f"{asked}\n{topic.question}", self.bot.settings.max_question_chars)
        placement = Placement(
            entry="follow_up",
            team_id=team,
            enterprise_id=origin.enterprise_id or "",
            channel_id=channel,
            thread_ts=thread_ts,
            ephemeral=False,
        )
        async with visible_progress(
            client,
            channel=channel,
            ts=ts,
            thread_ts=thread_ts,
            after_ms=self.bot.settings.progress_after_ms,
            waited_s=job.age_s,
        ):
            result = await answer_for_job(
                self.bot,
                job,
                tenant,
                question,
                service=topic.service,
                placement=placement,
                keep_unanswered=False,  # silent on it: nothing of it is kept either
            )
            if result.status != "answered":
                self.bot.metrics.answers_posted.labels("follow_up", "silent").inc()
                return
            card = self.bot.card(result, entry="follow_up", question=asked, ephemeral=False)
            message_ts = await reply.send(card, answer_id=result.answer_id)
        self.bot.metrics.answers_posted.labels("follow_up", result.status).inc()
        # Recorded with the job's end, in its transaction.
        job.pending.append(
            delivery_row(tenant, str(result.answer_id), message_ts=message_ts, ephemeral=False)
        )


def mentions_user(text: object, user_id: str | None) -> bool:
    return bool(user_id) and isinstance(text, str) and f"<@{user_id}" in text
