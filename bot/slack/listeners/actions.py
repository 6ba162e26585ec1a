"""The buttons on an answer card: Show/Hide quote, a runbook section, Share in channel, Retry,
and feedback.

Every button carries only an answer id; the card's state is loaded from the answers table under
the tenant of the workspace the click came from, and the card is re-rendered from it.
"""

from __future__ import annotations

import asyncio
import logging
import re
from typing import Any

from slack_bolt.async_app import AsyncAck, AsyncApp, AsyncBoltContext, AsyncRespond
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.core.answers.section_choice import allowed, parse_choice
from bot.core.answers.store import StoredAnswer
from bot.slack.answering import Bot
from bot.slack.blocks import Card
from bot.slack.blocks.draft_offer import kept_draft_offer
from bot.slack.delivery.job_replies import RETRY, queue_request
from bot.slack.delivery.posts import UNREACHABLE_CHANNEL, DeliveryError, slack_error
from bot.slack.listeners.draft_offers import offer_after_downvote
from bot.slack.listeners.feedback_form import open_reason_form
from bot.slack.listeners.retry_job import GONE, RetryJob
from bot.slack.tenancy import not_connected_card, origin_of, tenant_of

logger = logging.getLogger(__name__)

SHOW_QUOTE = re.compile(r"^show_quote:(\d+)$")
HIDE_QUOTE = re.compile(r"^hide_quote:(\d+)$")
ALREADY_SHARED = Card(text="This answer has already been shared in the channel.", blocks=[])
THANKS = Card(text="Thanks for the feedback.", blocks=[])
SECTION_REFUSED = Card(text="That runbook section is not part of this answer.", blocks=[])
SHOW_SECTION = re.compile(r"^show_section:\d+$")


def register_actions(app: AsyncApp, bot: Bot) -> None:
    listener = ActionListener(bot)
    app.action(SHOW_QUOTE)(listener.show_quote)
    app.action(HIDE_QUOTE)(listener.hide_quote)
    app.action(SHOW_SECTION)(listener.show_section)
    app.action("pick_section")(listener.show_section)
    app.action("share_answer")(listener.share)
    app.action("retry_answer")(listener.retry)
    bot.job_handlers.register(RETRY, RetryJob(bot))
    app.action("feedback")(listener.feedback)
    # Last: a stale or unknown button (an older card, a renamed action) gets an ack, not a 404
    # that shows the clicker a red error mark.
    app.action(re.compile(r".*"))(listener.unknown)


class ActionListener:
    def __init__(self, bot: Bot) -> None:
        self.bot = bot

    async def show_quote(
        self,
        ack: AsyncAck,
        body: dict[str, Any],
        client: AsyncWebClient,
        respond: AsyncRespond,
        context: AsyncBoltContext,
    ) -> None:
        await self._toggle_quote(ack, body, client, respond, context, show=True)

    async def hide_quote(
        self,
        ack: AsyncAck,
        body: dict[str, Any],
        client: AsyncWebClient,
        respond: AsyncRespond,
        context: AsyncBoltContext,
    ) -> None:
        await self._toggle_quote(ack, body, client, respond, context, show=False)

    async def show_section(
        self,
        ack: AsyncAck,
        body: dict[str, Any],
        client: AsyncWebClient,
        respond: AsyncRespond,
        context: AsyncBoltContext,
    ) -> None:
        """Redraw the card with the chosen section of its runbook, if the answer (loaded for
        the clicking workspace's tenant) names that runbook."""
        self.bot.tasks.adopt_current()
        await ack()
        tenant = await self._tenant(body, respond, context)
        if tenant is None:
            return
        choice = parse_choice(_chosen(body))
        stored = await self.bot.answers.load(tenant, choice.answer_id) if choice else None
        if choice is None or stored is None:
            await self.bot.delivery.respond(respond, GONE)
            return
        if not allowed(stored, choice):
            logger.info("refused a section click for answer %s", stored.answer_id)
            await self.bot.delivery.respond(respond, SECTION_REFUSED)
            return
        await self.bot.answers.show_section(tenant, stored.answer_id, choice.section)
        card = self.bot.stored_card(stored, ephemeral=_is_ephemeral(body), section=choice.section)
        await self._replace(body, client, respond, card)

    async def share(
        self,
        ack: AsyncAck,
        body: dict[str, Any],
        client: AsyncWebClient,
        respond: AsyncRespond,
        context: AsyncBoltContext,
    ) -> None:
        stored = await self._start(ack, body, respond, context)
        if stored is None:
            return
        user = _user(body)
        if not await self.bot.answers.claim_share(stored.tenant, stored.answer_id, user):
            await self.bot.delivery.respond(respond, ALREADY_SHARED)
            return
        card = self.bot.stored_card(stored, ephemeral=False)
        channel = (body.get("container") or {}).get("channel_id") or stored.placement.channel_id
        try:
            if not await self._post_if_member(client, channel, stored.placement.thread_ts, card):
                # The response_url can still post to the channel on the user's behalf.
                await self.bot.delivery.respond(respond, card, in_channel=True)
        except BaseException:
            # Not shared (as far as we know): the error card tells the user, and a later click
            # may share it. Keeping the claim would leave an answer nobody sees "already shared".
            await asyncio.shield(
                self.bot.answers.release_share(stored.tenant, stored.answer_id, user)
            )
            raise
        self.bot.metrics.answers_posted.labels("share", stored.result.status).inc()
        try:
            await self.bot.delivery.discard(respond)  # the private copy has done its job
        except DeliveryError:
            logger.info("shared answer %s: private copy not deleted", stored.answer_id)

    async def retry(self, ack: AsyncAck, body: dict[str, Any], context: AsyncBoltContext) -> None:
        """Queued before the ack; ``RetryJob`` asks again and redraws the card."""
        self.bot.tasks.adopt_current()
        await queue_request(self.bot, RETRY, body.get("trigger_id"), body, context)
        await ack()

    async def unknown(self, ack: AsyncAck, body: dict[str, Any]) -> None:
        await ack()
        logger.info("ignored click on unknown action in %s", _describe_action(body))

    async def feedback(
        self,
        ack: AsyncAck,
        body: dict[str, Any],
        client: AsyncWebClient,
        respond: AsyncRespond,
        context: AsyncBoltContext,
    ) -> None:
        self.bot.tasks.adopt_current()
        await ack()
        answer_id, _, vote = _value(body).rpartition(":")
        tenant = await self._tenant(body, respond, context)
        if tenant is None:
            return
        recorded = vote in ("up", "down") and await self.bot.answers.record_feedback(
            tenant, answer_id, _user(body), vote
        )
        if recorded and vote == "down":
            await open_reason_form(client, body, answer_id)  # 👎 asks why (feedback_form.py)
        await self.bot.delivery.respond(respond, THANKS if recorded else GONE)
        if recorded and vote == "down":  # the thread may hold the fix: offer to write it down
            await offer_after_downvote(self.bot, client, body, tenant, answer_id)

    async def _toggle_quote(
        self,
        ack: AsyncAck,
        body: dict[str, Any],
        client: AsyncWebClient,
        respond: AsyncRespond,
        context: AsyncBoltContext,
        *,
        show: bool,
    ) -> None:
        stored = await self._start(ack, body, respond, context)
        if stored is None:
            return
        pattern = SHOW_QUOTE if show else HIDE_QUOTE
        match = pattern.match(str(body["actions"][0].get("action_id", "")))
        n = int(match.group(1)) if match else 0
        expanded = await self.bot.answers.toggle_quote(
            stored.tenant, stored.answer_id, n, show=show
        )
        if expanded is None:
            await self.bot.delivery.respond(respond, GONE)
            return
        card = self.bot.stored_card(stored, ephemeral=_is_ephemeral(body), expanded=expanded)
        await self._replace(body, client, respond, card)

    async def _post_if_member(
        self, client: AsyncWebClient, channel: str | None, thread_ts: str | None, card: Card
    ) -> bool:
        if channel is None:
            return False
        try:
            await self.bot.delivery.post(client, channel=channel, thread_ts=thread_ts, card=card)
        except SlackApiError as exc:
            if slack_error(exc) not in UNREACHABLE_CHANNEL:
                raise
            return False
        return True

    async def _start(
        self, ack: AsyncAck, body: dict[str, Any], respond: AsyncRespond, context: AsyncBoltContext
    ) -> StoredAnswer | None:
        """Ack, then load the clicked card's answer (or tell the user why there is none)."""
        self.bot.tasks.adopt_current()
        await ack()
        tenant = await self._tenant(body, respond, context)
        if tenant is None:
            return None
        stored = await self.bot.answers.load(tenant, _value(body))
        if stored is None:
            await self.bot.delivery.respond(respond, GONE)
        return stored

    async def _tenant(
        self, body: dict[str, Any], respond: AsyncRespond, context: AsyncBoltContext
    ) -> str | None:
        origin = origin_of(body, context)
        tenant = await tenant_of(self.bot.store, origin)
        if tenant is None:
            await self.bot.delivery.respond(respond, not_connected_card(origin))
        return tenant

    async def _replace(
        self, body: dict[str, Any], client: AsyncWebClient, respond: AsyncRespond, card: Card
    ) -> None:
        """Re-render the clicked message in place (ephemeral ones only via response_url)."""
        container = body.get("container") or {}
        card = kept_draft_offer(body.get("message") or {}, card)
        if _is_ephemeral(body):
            await self.bot.delivery.respond(respond, card, replace_original=True)
        else:
            await self.bot.delivery.update(
                client, channel=container["channel_id"], ts=container["message_ts"], card=card
            )


def _is_ephemeral(body: dict[str, Any]) -> bool:
    return bool((body.get("container") or {}).get("is_ephemeral"))


def _value(body: dict[str, Any]) -> str:
    return str((body.get("actions") or [{}])[0].get("value") or "")


def _chosen(body: dict[str, Any]) -> str:
    """A button's value, or the value of the option picked in a menu."""
    action = (body.get("actions") or [{}])[0]
    picked = action.get("selected_option") or {}
    return str(action.get("value") or picked.get("value") or "")


def _user(body: dict[str, Any]) -> str:
    return str((body.get("user") or {}).get("id") or "")


def _describe_action(body: dict[str, Any]) -> str:
    return str((body.get("container") or {}).get("message_ts") or "an unknown message")
