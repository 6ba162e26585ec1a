"""Visible progress within a second of a question: Slack's AI loading status in the answer's
thread, plus the 🔍 reaction on the question, until the verified card is posted — shown only
when the card is not posted within ``RUNBOOK_PROGRESS_AFTER_MS`` (500 ms) of the request's
arrival. Most extractive answers come sooner; for them, adding and taking off a status and a
reaction would be four Web API calls (and two reaction events in every client) for nothing, and
under a burst those calls cost the workers and Slack's rate limits more than the answers.

Only progress is shown (status lines that say what is being done); no answer text appears
before the card, which is posted only after its citations were verified. Every call is best
effort: a workspace or client without the status feature (an error from Slack, a missing
scope) simply keeps today's behaviour, the reaction alone.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress

import aiohttp
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.slack.delivery.posts import add_working_mark, remove_working_mark

logger = logging.getLogger(__name__)

STATUS = "is searching runbooks…"
LOADING_MESSAGES = ["Searching runbooks…", "Checking evidence…", "Verifying citations…"]
# A job that waited in the queue past the allowance still gets this long before it shows
# progress: most answers take less once their job runs (a burst queues them, it does not slow
# them), and progress put up and taken off within it is churn. A slow answer shows it then.
QUEUED_GRACE_S = 0.2


@asynccontextmanager
async def visible_progress(
    client: AsyncWebClient,
    *,
    channel: str,
    ts: str,
    thread_ts: str | None,
    after_ms: int,
    waited_s: float,
) -> AsyncIterator[None]:
    """Show progress for the question ``ts`` whose answer goes in ``thread_ts`` once ``after_ms``
    have passed since the request arrived, of which the job spent ``waited_s`` in the queue
    (``RUNBOOK_PROGRESS_AFTER_MS``; 0: at once), and never sooner than ``QUEUED_GRACE_S`` after
    the job started.

    What was shown is taken off on the way out: Slack clears the status itself when the card is
    posted, but a silent outcome (an abstention nobody asked to see) must not leave it spinning.
    """
    committed = asyncio.Event()

    async def show_later() -> tuple[bool, bool]:
        await asyncio.sleep(max(after_ms / 1000 - waited_s, min(after_ms / 1000, QUEUED_GRACE_S)))
        # Past here the calls go out whatever happens, so whatever they add is taken off.
        committed.set()
        status = (
            asyncio.ensure_future(_set_status(client, channel, thread_ts, STATUS, LOADING_MESSAGES))
            if thread_ts
            else None
        )
        reacted = await add_working_mark(client, channel=channel, ts=ts)
        return (await status if status is not None else False), reacted

    shown = asyncio.ensure_future(show_later())
    try:
        yield
    finally:
        if not committed.is_set():
            shown.cancel()
            with suppress(asyncio.CancelledError):
                await shown
        else:
            status_set, reacted = await shown
            if reacted:
                await remove_working_mark(client, channel=channel, ts=ts)
            if status_set and thread_ts:
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
