"""``@runbook-bot …`` in a channel: one answer card in the mention's thread.

The intake middleware queues every ``app_mention`` as a ``slack.mention`` job before the ack
(``bot.slack.intake``); ``MentionJob`` answers it on whichever replica claims it. A bare
mention inside a thread asks about the thread's root message (typically an alert).
"""

from __future__ import annotations

import logging
import re
from typing import Any, TypeGuard

import aiohttp
from slack_bolt.async_app import AsyncApp
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.core.alerts.classifier import AlertText
from bot.core.answers.store import Placement, delivery_row
from bot.core.jobs.answers import answer_for_job
from bot.core.jobs.queue import Job, JobRequest
from bot.slack.alerts import fit_question, read_message
from bot.slack.answering import Bot
from bot.slack.blocks import render_internal_error, render_timed_out, render_usage
from bot.slack.delivery.job_replies import MENTION, ThreadReply, job_request, permanent
from bot.slack.delivery.posts import remove_working_mark
from bot.slack.delivery.progress import visible_progress
from bot.slack.listeners.draft_offers import offer_on_abstention
from bot.slack.tenancy import not_connected_card, origin_of, tenant_of

logger = logging.getLogger(__name__)


def register_mentions(app: AsyncApp, bot: Bot) -> None:
    bot.job_handlers.register(MENTION, MentionJob(bot))
    # Mentions and the messages the bot answers never reach a listener (intake queued them);
    # every other event lands here and is acked with a 200 and dropped. Bolt would answer 404,
    # which Slack retries and, if it keeps happening, answers by disabling the app's event
    # subscriptions.
    app.event(re.compile(r".*"))(ignore_event)


async def ignore_event(event: dict[str, Any]) -> None:
    logger.debug("ignored event of type %r", event.get("type"))


def mention_job(body: dict[str, Any]) -> JobRequest | None:
    """The job for an Events API delivery, if it is a mention (keyed by its event id)."""
    event = body.get("event") or {}
    event_id = body.get("event_id")
    if event.get("type") != "app_mention" or not isinstance(event_id, str):
        return None
    return job_request(MENTION, event_id, body)


def strip_mention(text: str, bot_user_id: str | None) -> str:
    """The question without the bot's own ``<@U…>`` (other mentions stay: they may matter)."""
    if bot_user_id:
        text = re.sub(rf"<@{re.escape(bot_user_id)}(?:\|[^>]*)?>", " ", text)
    return " ".join(text.split())


class MentionJob:
    def __init__(self, bot: Bot) -> None:
        self.bot = bot

    async def run(self, job: Job) -> None:
        reply = await self._reply(job)
        if reply is None:
            return
        try:
            await self._answer(job, reply)
        except SlackApiError as exc:
            if not permanent(exc):
                raise  # 5xx, rate limits: the job runs again, and looks before it posts
            self.bot.metrics.listener_errors.inc()
            logger.error("mention job %s failed: %s", job.job_id, exc.response.get("error"))
            await reply.send(render_internal_error())

    async def give_up(self, job: Job) -> None:
        reply = await self._reply(job)
        if reply is None:
            return
        if await reply.already_posted(even_first_run=True) is None:
            await reply.send(render_timed_out())
        if reply.since is not None:
            await remove_working_mark(reply.client, channel=reply.channel, ts=reply.since)

    async def _reply(self, job: Job) -> ThreadReply | None:
        event = job.payload.get("event") or {}
        channel, ts, text = event.get("channel"), event.get("ts"), event.get("text") or ""
        thread_ts = event.get("thread_ts") or ts
        if not (_id(channel) and _id(ts) and _id(thread_ts) and isinstance(text, str)):
            # Not a shape Slack sends: there is nowhere to reply, so nothing to do.
            logger.warning("ignored a malformed app_mention %s", job.payload.get("event_id"))
            return None
        client = await self.bot.clients.for_request(job.payload)
        if client is None:
            logger.warning("mention job %s: the workspace is not installed", job.job_id)
            return None
        return ThreadReply(self.bot, client, job, channel, thread_ts, since=ts)

    async def _answer(self, job: Job, reply: ThreadReply) -> None:
        if await reply.already_posted() is not None:
            return
        body, event, client = job.payload, job.payload["event"], reply.client
        origin = origin_of(body)
        tenant = await tenant_of(self.bot.store, origin)
        if tenant is None:
            card = not_connected_card(origin)
            if origin.outsider:  # another organisation's user: tell them alone
                await client.chat_postEphemeral(
                    channel=reply.channel,
                    user=str(event.get("user") or ""),
                    thread_ts=reply.thread_ts,
                    text=card.text,
                    blocks=card.blocks,
                )
                return
            await reply.send(card)
            return
        bot_user_id = await self.bot.clients.bot_user_id(client, body)
        question = strip_mention(event.get("text") or "", bot_user_id)
        hints: tuple[str, ...] = ()
        if not question and event.get("thread_ts"):
            root = await self._thread_root(client, reply.channel, event["thread_ts"])
            question = fit_question(root.question, self.bot.settings.max_question_chars)
            hints = root.hints
        if not question:
            await reply.send(render_usage())
            return
        placement = Placement(
            entry="mention",
            team_id=origin.team_id or "",
            enterprise_id=origin.enterprise_id or "",
            channel_id=reply.channel,
            thread_ts=reply.thread_ts,
            ephemeral=False,
        )
        assert reply.since is not None  # _reply checked the event's ts
        async with visible_progress(
            client,
            channel=reply.channel,
            ts=reply.since,
            thread_ts=reply.thread_ts,
            after_ms=self.bot.settings.progress_after_ms,
            waited_s=job.age_s,
        ):
            service = await self.bot.scope_for(tenant, origin, hints)
            result = await answer_for_job(
                self.bot, job, tenant, question, service=service, placement=placement
            )
            card = self.bot.card(result, entry="mention", question=question, ephemeral=False)
            card = await offer_on_abstention(
                client,
                card,
                result,
                channel=reply.channel,
                thread_ts=reply.thread_ts,
                asked_ts=reply.since,
            )
            message_ts = await reply.send(card, answer_id=result.answer_id)
        self.bot.metrics.answers_posted.labels("mention", result.status).inc()
        # Recorded with the job's end, in its transaction.
        job.pending.append(
            delivery_row(tenant, str(result.answer_id), message_ts=message_ts, ephemeral=False)
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
