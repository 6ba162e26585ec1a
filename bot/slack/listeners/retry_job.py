"""The Retry button: the stored question asked again, the clicked card replaced in place.

The click is queued as a ``slack.retry`` job before its ack. Replacing is idempotent
(``chat.update``, or ``replace_original`` through the response_url for a private card), so a
re-run after a crash redraws the same card instead of adding one.
"""

from __future__ import annotations

from typing import Any

from bot.core.answers.store import delivery_row
from bot.core.jobs.answers import answer_for_job
from bot.core.jobs.queue import Job
from bot.slack.answering import Bot
from bot.slack.blocks import Card, render_searching, render_timed_out
from bot.slack.delivery.job_replies import PrivateReply
from bot.slack.tenancy import not_connected_card, origin_of, tenant_of

GONE = Card(text="That answer is no longer available. Ask again to get a fresh one.", blocks=[])


class RetryJob:
    def __init__(self, bot: Bot) -> None:
        self.bot = bot

    async def run(self, job: Job) -> None:
        body = job.payload
        origin = origin_of(body)
        tenant = await tenant_of(self.bot.store, origin)
        if tenant is None:
            await (await self._private(job)).send(not_connected_card(origin))
            return
        stored = await self.bot.answers.load(tenant, clicked_value(body))
        if stored is None:
            await (await self._private(job)).send(GONE)
            return
        await self._replace(job, render_searching())
        result = await answer_for_job(
            self.bot,
            job,
            stored.tenant,
            stored.question,
            service=stored.service,
            placement=stored.placement,
        )
        ephemeral = is_ephemeral(body)
        card = self.bot.card(
            result, entry=stored.placement.entry, question=stored.question, ephemeral=ephemeral
        )
        await self._replace(job, card)
        self.bot.metrics.answers_posted.labels("retry", result.status).inc()
        # Recorded with the job's end, in its transaction.
        job.pending.append(
            delivery_row(
                stored.tenant,
                str(result.answer_id),
                message_ts=(body.get("container") or {}).get("message_ts"),
                ephemeral=ephemeral,
            )
        )

    async def give_up(self, job: Job) -> None:
        await self._replace(job, render_timed_out())

    async def _replace(self, job: Job, card: Card) -> None:
        """Re-render the clicked message in place (ephemeral ones only via response_url)."""
        container = job.payload.get("container") or {}
        if is_ephemeral(job.payload):
            await (await self._private(job)).send(card, replace_original=True)
            return
        client = await self.bot.clients.for_request(job.payload)
        if client is None:
            return
        await self.bot.delivery.update(
            client, channel=container["channel_id"], ts=container["message_ts"], card=card
        )

    async def _private(self, job: Job) -> PrivateReply:
        body = job.payload
        client = await self.bot.clients.for_request(body)
        user = body.get("user") or {}
        user_id = user.get("id") if isinstance(user, dict) else None
        return PrivateReply(self.bot, client, job, body.get("response_url"), user_id)


def is_ephemeral(body: dict[str, Any]) -> bool:
    return bool((body.get("container") or {}).get("is_ephemeral"))


def clicked_value(body: dict[str, Any]) -> str:
    return str((body.get("actions") or [{}])[0].get("value") or "")
