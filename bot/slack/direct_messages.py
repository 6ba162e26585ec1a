"""Direct messages to the bot: answered in the DM, with an introduction the first time.

The tenant comes from the workspace, as everywhere else. The intro (what the bot does and a few
questions to try) is given once per person, remembered in Postgres, so a second replica or a
restart never repeats it. An answer in a DM is always shown, abstention included: the person
asked.
"""

from __future__ import annotations

from typing import Any

from slack_sdk.web.async_client import AsyncWebClient

from bot.core.answers_store import Placement
from bot.core.dm_intros import first_direct_message
from bot.slack.answering import Bot, render
from bot.slack.blocks import render_not_connected, render_usage
from bot.slack.blocks.incident import render_dm_intro
from bot.slack.mentions import strip_mention
from bot.slack.progress import visible_progress
from bot.slack.tenancy import origin_of, tenant_of

_HELP_WORDS = frozenset({"", "help", "?", "hi", "hello", "hey"})


async def answer_direct_message(
    bot: Bot, client: AsyncWebClient, body: dict[str, Any], event: dict[str, Any], bot_user: str
) -> None:
    """The one entry a job queue would run for DMs."""
    channel, ts, user, text = (
        event.get("channel"),
        event.get("ts"),
        event.get("user"),
        event.get("text"),
    )
    if event.get("bot_id") or not (
        isinstance(channel, str)
        and isinstance(ts, str)
        and isinstance(user, str)
        and isinstance(text, str)
    ):
        return  # DMs from other apps (or shapes Slack does not send) are not questions
    thread_ts = event.get("thread_ts")
    origin = origin_of(body)
    delivery = bot.delivery
    tenant = await tenant_of(bot.store, origin)
    if tenant is None:
        card = render_not_connected(team_id=origin.team_id, enterprise_id=origin.enterprise_id)
        await delivery.post(client, channel=channel, thread_ts=thread_ts, card=card)
        return
    team = origin.team_id or ""
    if await first_direct_message(bot.store, team, user):
        await delivery.post(client, channel=channel, thread_ts=thread_ts, card=render_dm_intro())
    question = strip_mention(text, bot_user)
    if question.lower().strip("!.") in _HELP_WORDS:
        await delivery.post(client, channel=channel, thread_ts=thread_ts, card=render_usage())
        return
    placement = Placement(
        entry="dm",
        team_id=team,
        enterprise_id=origin.enterprise_id or "",
        channel_id=channel,
        thread_ts=thread_ts,
        ephemeral=False,
    )
    async with visible_progress(client, channel=channel, ts=ts, thread_ts=thread_ts):
        service = await bot.scope_for(tenant, origin)
        result = await bot.ask(tenant, question, service=service, placement=placement)
        card = render(
            result,
            entry="dm",
            question=question,
            ephemeral=False,
            stale_after_days=bot.settings.stale_after_days,
        )
        message_ts = await delivery.post(client, channel=channel, thread_ts=thread_ts, card=card)
    bot.metrics.answers_posted.labels("dm", result.status).inc()
    await bot.answers.record_delivery(
        tenant, str(result.answer_id), message_ts=message_ts, ephemeral=False
    )
