"""Visible progress within a second of a question: Slack's AI loading status in the answer's
thread, plus the 🔍 reaction on the question, until the verified card is posted.

Only progress is shown (status lines that say what is being done); no answer text appears
before the card, which is posted only after its citations were verified. Every call is best
effort: a workspace or client without the status feature (an error from Slack, a missing
scope) simply keeps today's behaviour, the reaction alone.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import aiohttp
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.slack.delivery.posts import working_mark

logger = logging.getLogger(__name__)

STATUS = "is searching runbooks…"
LOADING_MESSAGES = ["Searching runbooks…", "Checking evidence…", "Verifying citations…"]


@asynccontextmanager
async def visible_progress(
    client: AsyncWebClient, *, channel: str, ts: str, thread_ts: str | None
) -> AsyncIterator[None]:
    """Show progress for the question ``ts`` whose answer goes in ``thread_ts``.

    The status is cleared on the way out: Slack clears it itself when the card is posted, but a
    silent outcome (an abstention nobody asked to see) must not leave it spinning for minutes.
    """
    status = (
        asyncio.ensure_future(_set_status(client, channel, thread_ts, STATUS, LOADING_MESSAGES))
        if thread_ts
        else None
    )
    try:
        async with working_mark(client, channel=channel, ts=ts):
            yield
    finally:
        if status is not None and await status and thread_ts:
            await _set_status(client, channel, thread_ts, "", None)


async def _set_status(
    client: AsyncWebClient,
    channel: str,
    thread_ts: str,
    status: str,
    loading_messages: list[str] | None,
) -> bool:
    try:
        await client.assistant_threads_setStatus(
            channel_id=channel,
            thread_ts=thread_ts,
            status=status,
            loading_messages=loading_messages,
        )
    except (SlackApiError, aiohttp.ClientError, TimeoutError) as exc:
        logger.info("loading status skipped: %s", type(exc).__name__)
        return False
    return True
