""" "Write the runbook" on a card: decided when the card is drawn or redrawn, opened on click.

The button is offered on a "No runbook evidence" card asked inside a thread, and on an answer
redrawn after its 👎, once the thread has ``OFFER_AFTER_HUMAN_REPLIES`` replies from people.
Counting reads one page of ``conversations.replies`` (never the whole thread), at most once a
minute per thread in this process: the method may be limited to one call a minute. The click
opens the review modal of the "Draft a runbook from this thread" shortcut for the answer's
thread, with the same permission checks (``DraftShortcut.view_for``).
"""

from __future__ import annotations

import logging
import time
from typing import Any

import aiohttp
from slack_bolt.async_app import AsyncAck, AsyncApp, AsyncBoltContext
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.core.drafts.thread import OFFER_AFTER_HUMAN_REPLIES
from bot.slack.answering import Bot
from bot.slack.blocks import Card
from bot.slack.blocks.card import interaction_id
from bot.slack.blocks.draft_modal import notice_modal
from bot.slack.blocks.draft_offer import WRITE_RUNBOOK, with_draft_offer
from bot.slack.delivery.posts import DeliveryError
from bot.slack.listeners.drafts import DraftShortcut
from bot.slack.tenancy import origin_of, tenant_of
from rag import AskResult

logger = logging.getLogger(__name__)

_PAGE = 100
_FRESH_FOR = 60.0
_MAX_REMEMBERED = 2000
_counted: dict[tuple[str, str], tuple[float, int]] = {}
GONE = "That answer is no longer stored, so its thread cannot be drafted from here."


def register_draft_offers(app: AsyncApp, bot: Bot) -> None:
    """Before ``register_actions``: its catch-all would take the click otherwise."""
    app.action(WRITE_RUNBOOK)(WriteRunbook(bot).handle)


async def human_replies(client: AsyncWebClient, channel: str, thread_ts: str) -> int:
    """Replies in the thread not posted by a bot, from one page (enough to pass the bar)."""
    key = (channel, thread_ts)
    now = time.monotonic()
    known = _counted.get(key)
    if known is not None and now - known[0] < _FRESH_FOR:
        return known[1]
    try:
        reply = await client.conversations_replies(channel=channel, ts=thread_ts, limit=_PAGE)
    except (SlackApiError, aiohttp.ClientError, TimeoutError) as exc:
        logger.info("thread replies uncounted: %s", type(exc).__name__)
        return 0
    messages = [m for m in reply.get("messages") or [] if isinstance(m, dict)]
    count = sum(
        1
        for m in messages
        if str(m.get("ts")) != thread_ts
        and m.get("user")
        and not m.get("bot_id")
        and m.get("subtype") != "bot_message"
    )
    if len(_counted) >= _MAX_REMEMBERED:
        _counted.clear()
    _counted[key] = (now, count)
    return count


async def offer_on_abstention(
    client: AsyncWebClient,
    card: Card,
    result: AskResult,
    *,
    channel: str,
    thread_ts: str | None,
    asked_ts: str | None,
) -> Card:
    """An abstention asked inside an existing thread that people have worked in gets the
    button; a question that starts its own thread has nothing to draft from yet."""
    answer_id = interaction_id(result)
    if result.status != "abstained" or answer_id is None or thread_ts is None:
        return card
    if asked_ts in (None, thread_ts):
        return card
    if await human_replies(client, channel, thread_ts) < OFFER_AFTER_HUMAN_REPLIES:
        return card
    return with_draft_offer(card, answer_id)


async def offer_after_downvote(
    bot: Bot, client: AsyncWebClient, body: dict[str, Any], tenant: str, answer_id: str
) -> None:
    """Redraw a 👎'd answer posted in a thread with the button, once people worked it there."""
    container = body.get("container") or {}
    channel, ts = container.get("channel_id"), container.get("message_ts")
    if container.get("is_ephemeral") or not isinstance(channel, str) or not isinstance(ts, str):
        return
    stored = await bot.answers.load(tenant, answer_id)
    if stored is None or not stored.placement.thread_ts:
        return
    if await human_replies(client, channel, stored.placement.thread_ts) < (
        OFFER_AFTER_HUMAN_REPLIES
    ):
        return
    card = with_draft_offer(bot.stored_card(stored, ephemeral=False), answer_id)
    try:
        await bot.delivery.update(client, channel=channel, ts=ts, card=card)
    except (SlackApiError, DeliveryError) as exc:  # the vote stands; the card stays as it was
        logger.info("answer %s not redrawn with the draft offer: %s", answer_id, exc)


class WriteRunbook:
    """The click: the review modal for the answer's thread (read once, now)."""

    def __init__(self, bot: Bot) -> None:
        self.bot = bot
        self.shortcut = DraftShortcut(bot)

    async def handle(
        self, ack: AsyncAck, body: dict[str, Any], client: AsyncWebClient, context: AsyncBoltContext
    ) -> None:
        self.bot.tasks.adopt_current()  # a drain waits for the modal too
        await ack()
        trigger = str(body.get("trigger_id") or "")
        await client.views_open(trigger_id=trigger, view=await self._view(body, client, context))

    async def _view(
        self, body: dict[str, Any], client: AsyncWebClient, context: AsyncBoltContext
    ) -> dict[str, Any]:
        origin = origin_of(body, context)
        tenant = await tenant_of(self.bot.store, origin)
        if tenant is None:
            return notice_modal("Not connected", "This workspace is not connected to runbooks yet.")
        answer_id = str((body.get("actions") or [{}])[0].get("value") or "")
        stored = await self.bot.answers.load(tenant, answer_id) if answer_id else None
        placement = stored.placement if stored is not None else None
        if placement is None or not placement.channel_id or not placement.thread_ts:
            return notice_modal("Not available", GONE)
        user = str((body.get("user") or {}).get("id") or "")
        return await self.shortcut.view_for(
            client, origin, user, placement.channel_id, placement.thread_ts
        )
