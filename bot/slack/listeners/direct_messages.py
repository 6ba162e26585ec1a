"""Direct messages to the bot: answered in the DM, with an introduction the first time.

The tenant comes from the workspace, as everywhere else. The intro (what the bot does and a few
questions to try) is given once per person, remembered in Postgres, so a second replica or a
restart never repeats it. An answer in a DM is always shown, abstention included: the person
asked; so is the "could not answer in time" card of a job that gave up.

Intake queues a person's DM as a ``slack.direct_message`` job (``is_direct_question``: no
database needed); ``DirectMessageJob`` answers it, once, on whichever replica claims it.
"""

from __future__ import annotations

import logging
from typing import Any

from slack_sdk.errors import SlackApiError

from bot.core.answers.store import Placement, delivery_row
from bot.core.dm_intros import first_direct_message
from bot.core.jobs.answers import answer_for_job
from bot.core.jobs.queue import Job
from bot.slack.answering import Bot
from bot.slack.blocks import (
    render_internal_error,
    render_not_connected,
    render_timed_out,
    render_usage,
)
from bot.slack.blocks.incident import render_dm_intro
from bot.slack.delivery.job_replies import ThreadReply, permanent
from bot.slack.delivery.posts import remove_working_mark, slack_error
from bot.slack.delivery.progress import visible_progress
from bot.slack.delivery.queued_messages import QueuedMessage, open_message
from bot.slack.listeners.mentions import strip_mention
from bot.slack.tenancy import origin_of, tenant_of

logger = logging.getLogger(__name__)

_HELP_WORDS = frozenset({"", "help", "?", "hi", "hello", "hey"})


def is_direct_question(event: dict[str, Any]) -> bool:
    """A person's message in a DM, from the event alone (intake asks it before the ack)."""
    fields = (event.get(name) for name in ("channel", "ts", "user", "text"))
    # DMs from other apps (or shapes Slack does not send) are not questions.
    return not event.get("bot_id") and all(isinstance(value, str) for value in fields)


class DirectMessageJob:
    def __init__(self, bot: Bot) -> None:
        self.bot = bot

    async def run(self, job: Job) -> None:
        message = await open_message(self.bot, job)
        if message is None or not is_direct_question(message.event):
            return
        reply = _reply(self.bot, job, message)
        try:
            await self._answer(job, message, reply)
        except SlackApiError as exc:
            if not permanent(exc):
                raise  # 5xx, rate limits: the job runs again, and looks before it posts
            self.bot.metrics.listener_errors.inc()
            logger.error("DM job %s failed: %s", job.job_id, slack_error(exc))
            await reply.send(render_internal_error())

    async def give_up(self, job: Job) -> None:
        message = await open_message(self.bot, job)
        if message is None or not is_direct_question(message.event):
            return
        reply = _reply(self.bot, job, message)
        if await reply.already_posted(even_first_run=True) is None:
            await reply.send(render_timed_out())
        await remove_working_mark(message.client, channel=message.channel, ts=message.ts)

    async def _answer(self, job: Job, message: QueuedMessage, reply: ThreadReply) -> None:
        if await reply.already_posted() is not None:
            return
        client, channel, ts = message.client, message.channel, message.ts
        origin = origin_of(message.body)
        tenant = await tenant_of(self.bot.store, origin)
        if tenant is None:
            await reply.send(
                render_not_connected(team_id=origin.team_id, enterprise_id=origin.enterprise_id)
            )
            return
        team = origin.team_id or ""
        if await first_direct_message(self.bot.store, team, str(message.event["user"])):
            # Not tagged with the job: a re-run must look for its answer, not find the intro.
            await self.bot.delivery.post(
                client, channel=channel, thread_ts=reply.thread_ts, card=render_dm_intro()
            )
        question = strip_mention(str(message.event["text"]), message.bot_user)
        if question.lower().strip("!.") in _HELP_WORDS:
            await reply.send(render_usage())
            return
        placement = Placement(
            entry="dm",
            team_id=team,
            enterprise_id=origin.enterprise_id or "",
            channel_id=channel,
            thread_ts=reply.thread_ts,
            ephemeral=False,
        )
        async with visible_progress(
            client,
            channel=channel,
            ts=ts,
            thread_ts=reply.thread_ts,
            after_ms=self.bot.settings.progress_after_ms,
            waited_s=job.age_s,
        ):
            service = await self.bot.scope_for(tenant, origin)
            result = await answer_for_job(
                self.bot, job, tenant, question, service=service, placement=placement
            )
            card = self.bot.card(result, entry="dm", question=question, ephemeral=False)
            message_ts = await reply.send(card, answer_id=result.answer_id)
        self.bot.metrics.answers_posted.labels("dm", result.status).inc()
        # Recorded with the job's end, in its transaction.
        job.pending.append(
            delivery_row(tenant, str(result.answer_id), message_ts=message_ts, ephemeral=False)
        )


def _reply(bot: Bot, job: Job, message: QueuedMessage) -> ThreadReply:
    """In the DM's thread if the question was asked in one, else top-level in the DM."""
    thread_ts = message.event.get("thread_ts")
    thread = thread_ts if isinstance(thread_ts, str) and thread_ts else None
    return ThreadReply(bot, message.client, job, message.channel, thread, since=message.ts)
