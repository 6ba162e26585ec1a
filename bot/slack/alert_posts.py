"""Proactive answers to alert posts, in channels that opted in (``runbook channel alerts``).

A new top-level post that announces a firing alert gets one answer card in its thread, marked
as automatic and carrying a "Mute this alert here" button. Silence is the default whenever that
is not clearly wanted: a channel not opted in, a resolved or unclear notification, a post that
is not an alert, a muted alert, the same alert again within the repeat window, an unknown
workspace, and an abstention all post nothing.
"""

from __future__ import annotations

import logging
from typing import Any

from slack_sdk.web.async_client import AsyncWebClient

from bot.core.alert_memory import AlertKey, AlertMemory
from bot.core.answers_store import Placement
from bot.core.channel_settings import channel_settings
from bot.slack.alert_classifier import AlertPost, classify_alert
from bot.slack.alerts import fit_question
from bot.slack.answering import Bot, render
from bot.slack.tenancy import origin_of, tenant_of

logger = logging.getLogger(__name__)


async def answer_alert_post(
    bot: Bot,
    memory: AlertMemory,
    client: AsyncWebClient,
    body: dict[str, Any],
    event: dict[str, Any],
) -> None:
    """Answer a top-level channel post if it is a new firing alert in an opted-in channel.
    The one entry a job queue would run for alert posts."""
    channel, ts = event.get("channel"), event.get("ts")
    if not (isinstance(channel, str) and isinstance(ts, str)):
        return
    alert = classify_alert(event)
    if alert is None or alert.state != "firing":
        return
    origin = origin_of(body)
    tenant = await tenant_of(bot.store, origin)
    team = origin.team_id or ""
    if tenant is None or not (await channel_settings(bot.store, tenant, team, channel)).alerts:
        return
    key = AlertKey(tenant, team, channel, alert.fingerprint, alert.name)
    if await memory.is_muted(key) or not await memory.claim(key):
        logger.info("alert %s in %s: muted or repeated, not answered", key.fingerprint, channel)
        return
    question = fit_question(alert.text.question, bot.settings.max_question_chars)
    placement = Placement(
        entry="alert",
        team_id=team,
        enterprise_id=origin.enterprise_id or "",
        channel_id=channel,
        thread_ts=ts,
        ephemeral=False,
    )
    service = await bot.scope_for(tenant, origin, scope_hints(alert))
    result = await bot.ask(tenant, question, service=service, placement=placement)
    if result.status != "answered":
        bot.metrics.answers_posted.labels("alert", "silent").inc()
        return
    card = render(
        result,
        entry="alert",
        question=question,
        ephemeral=False,
        stale_after_days=bot.settings.stale_after_days,
    )
    message_ts = await bot.delivery.post(client, channel=channel, thread_ts=ts, card=card)
    bot.metrics.answers_posted.labels("alert", result.status).inc()
    await memory.record_answer(key, str(result.answer_id))
    await bot.answers.record_delivery(
        tenant, str(result.answer_id), message_ts=message_ts, ephemeral=False
    )


def scope_hints(alert: AlertPost) -> tuple[str, ...]:
    """Service-like labels first, then whatever the alert reader found."""
    labels = dict(alert.labels)
    preferred = [labels[k] for k in ("service", "app", "container", "namespace") if k in labels]
    return tuple(dict.fromkeys([*preferred, *alert.text.hints]))
