"""What the jobs for message events (alert posts, follow-ups, DMs) share: the queued message,
the client to answer it with, and the checks intake could not make without a call.

Intake routed the message from its fields alone (``bot.slack.message_events``); a job runs
without Bolt, so the bot's own messages are recognised here (Bolt's self-event check never saw
a queued event), and the bot's user id is resolved for the mention checks.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, TypeGuard

from slack_sdk.web.async_client import AsyncWebClient

from bot.core.jobs.queue import Job
from bot.slack.answering import Bot

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class QueuedMessage:
    """A message event a job answers: the verified body, its event, and where it was said."""

    body: dict[str, Any]
    event: dict[str, Any]
    channel: str
    ts: str
    client: AsyncWebClient
    bot_user: str  # the bot's own user id ("" when Slack would not say)


async def open_message(bot: Bot, job: Job) -> QueuedMessage | None:
    """The job's message, unless there is nothing to answer: a shape Slack does not send, a
    workspace no longer installed, or the bot's own message."""
    body = job.payload
    event = body.get("event")
    channel = event.get("channel") if isinstance(event, dict) else None
    ts = event.get("ts") if isinstance(event, dict) else None
    if not (isinstance(event, dict) and _id(channel) and _id(ts)):
        logger.warning("job %s: not a message event Slack sends; ignored", job.job_id)
        return None
    client = await bot.clients.for_request(body)
    if client is None:
        logger.warning("job %s: the workspace is not installed", job.job_id)
        return None
    if await bot.clients.sent_by_bot(client, body):
        return None  # never answer itself: a reply loop is the worst failure
    bot_user = await bot.clients.bot_user_id(client, body) or ""
    return QueuedMessage(body, event, channel, ts, client, bot_user)


def _id(value: object) -> TypeGuard[str]:
    return isinstance(value, str) and bool(value)
