"""The "Ask runbooks" message shortcut on an alert post: the answer goes in the alert's thread.

The listener queues a ``slack.shortcut`` job and acks. The question is the whole alert (text,
attachments, blocks); its service label scopes retrieval when the tenant has runbooks for that
service. If the bot may not post in the channel, the answer comes back privately through the
shortcut's response_url instead (a DM once that has expired).
"""

from __future__ import annotations

from typing import Any

from slack_bolt.async_app import AsyncAck, AsyncApp, AsyncBoltContext
from slack_sdk.errors import SlackApiError

from bot.core.answers.store import Placement, delivery_row
from bot.core.jobs.answers import answer_for_job
from bot.core.jobs.queue import Job
from bot.slack.alerts import fit_question, read_message
from bot.slack.answering import Bot
from bot.slack.blocks import Card, render_timed_out, render_usage
from bot.slack.delivery.job_replies import SHORTCUT, PrivateReply, ThreadReply, queue_request
from bot.slack.delivery.posts import UNREACHABLE_CHANNEL, remove_working_mark, slack_error
from bot.slack.delivery.progress import visible_progress
from bot.slack.tenancy import not_connected_card, origin_of, tenant_of

CALLBACK_ID = "ask_runbooks"


def register_shortcuts(app: AsyncApp, bot: Bot) -> None:
    app.shortcut(CALLBACK_ID)(ShortcutListener(bot).handle)
    bot.job_handlers.register(SHORTCUT, ShortcutJob(bot))


class ShortcutListener:
    def __init__(self, bot: Bot) -> None:
        self.bot = bot

    async def handle(self, ack: AsyncAck, body: dict[str, Any], context: AsyncBoltContext) -> None:
        self.bot.tasks.adopt_current()
        await queue_request(self.bot, SHORTCUT, body.get("trigger_id"), body, context)
        await ack()


class ShortcutJob:
    def __init__(self, bot: Bot) -> None:
        self.bot = bot

    async def run(self, job: Job) -> None:
        body = job.payload
        origin = origin_of(body)
        private = await self._private(job)
        tenant = await tenant_of(self.bot.store, origin)
        if tenant is None:
            await private.send(not_connected_card(origin))
            return
        message: dict[str, Any] = body.get("message") or {}
        alert = read_message(message)
        question = fit_question(alert.question, self.bot.settings.max_question_chars)
        thread = self._thread(job, private)
        if not question or thread is None:
            await private.send(render_usage())
            return
        if await thread.already_posted() is not None:
            return
        placement = Placement(
            entry="shortcut",
            team_id=origin.team_id or "",
            enterprise_id=origin.enterprise_id or "",
            channel_id=thread.channel,
            thread_ts=thread.thread_ts,
            ephemeral=False,
        )
        assert thread.since is not None  # _thread read the message's ts
        posted_ts: str | None = None
        async with visible_progress(
            thread.client,
            channel=thread.channel,
            ts=thread.since,
            thread_ts=thread.thread_ts,
            after_ms=self.bot.settings.progress_after_ms,
            waited_s=job.age_s,
        ):
            service = await self.bot.scope_for(tenant, origin, alert.hints)
            result = await answer_for_job(
                self.bot, job, tenant, question, service=service, placement=placement
            )
            cards = [
                self.bot.card(result, entry="shortcut", question=question, ephemeral=ephemeral)
                for ephemeral in (False, True)
            ]
            posted_ts = await self._post(thread, private, *cards, answer_id=result.answer_id)
        self.bot.metrics.answers_posted.labels("shortcut", result.status).inc()
        # Recorded with the job's end, in its transaction.
        job.pending.append(
            delivery_row(
                tenant, str(result.answer_id), message_ts=posted_ts, ephemeral=posted_ts is None
            )
        )

    async def give_up(self, job: Job) -> None:
        private = await self._private(job)
        thread = self._thread(job, private)
        if thread is None:
            await private.send(render_timed_out())
            return
        if await thread.already_posted(even_first_run=True) is None:
            await self._post(thread, private, render_timed_out(), render_timed_out())
        assert thread.since is not None
        await remove_working_mark(thread.client, channel=thread.channel, ts=thread.since)

    async def _post(
        self,
        thread: ThreadReply,
        private: PrivateReply,
        card: Card,
        private_card: Card,
        *,
        answer_id: str | None = None,
    ) -> str | None:
        """In the alert's thread; privately when the bot may not post there (None then)."""
        try:
            return await thread.send(card, answer_id=answer_id)
        except SlackApiError as exc:
            if slack_error(exc) not in UNREACHABLE_CHANNEL:
                raise
        await private.send(private_card)
        return None

    def _thread(self, job: Job, private: PrivateReply) -> ThreadReply | None:
        message: dict[str, Any] = job.payload.get("message") or {}
        channel = origin_of(job.payload).channel_id
        message_ts = message.get("ts")
        if channel is None or not isinstance(message_ts, str) or private.client is None:
            return None
        thread_ts = message.get("thread_ts") or message_ts
        return ThreadReply(self.bot, private.client, job, channel, thread_ts, since=message_ts)

    async def _private(self, job: Job) -> PrivateReply:
        body = job.payload
        client = await self.bot.clients.for_request(body)
        user = body.get("user") or {}
        user_id = user.get("id") if isinstance(user, dict) else None
        return PrivateReply(self.bot, client, job, body.get("response_url"), user_id)
