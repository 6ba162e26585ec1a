"""Slack intake: count every verified delivery, drop duplicate Events API deliveries, and queue
the ones that are work (a mention, or a message the bot answers unasked: an alert post, a
follow-up, a DM) in the same transaction as their dedupe claim.

Runs as Bolt's ``before_authorize`` middleware, so a duplicate costs no token lookup, and a
queued event is acked without one: the job's worker looks the token up when it runs.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

from slack_bolt.response import BoltResponse

from bot.core.dedupe import EventDeduper
from bot.core.jobs.queue import JobRequest
from bot.core.metrics import BotMetrics

logger = logging.getLogger(__name__)


def request_kind(body: dict[str, Any]) -> str:
    """A bounded label for a delivery: the event type, ``command`` or the interaction type."""
    if body.get("type") == "event_callback":
        return str((body.get("event") or {}).get("type", "event"))
    if "command" in body:
        return "command"
    return str(body.get("type") or "other")


def build_intake_middleware(
    deduper: EventDeduper,
    metrics: BotMetrics,
    job_for: Callable[[dict[str, Any]], JobRequest | None],
) -> Callable[..., Awaitable[BoltResponse | None]]:
    """The ``before_authorize`` middleware: count, drop duplicates, queue work (``job_for``)."""

    async def intake(
        body: dict[str, Any], next_: Callable[[], Awaitable[None]]
    ) -> BoltResponse | None:
        if body.get("type") == "event_callback" and not _typed_event(body.get("event")):
            # Signed but not a shape Slack sends; acked, so it is not retried, and dropped.
            logger.warning("dropped a malformed event delivery %s", body.get("event_id"))
            return BoltResponse(status=200, body="")
        metrics.events_received.labels(request_kind(body)).inc()
        event_id = body.get("event_id")
        if isinstance(event_id, str):
            job = job_for(body)
            if not await deduper.first_delivery(event_id, job):
                metrics.duplicates_dropped.inc()
                logger.info("dropped duplicate delivery of %s", event_id)
                # Returning a response (not None) is what stops Bolt here with a 200.
                return BoltResponse(status=200, body="")
            if job is not None:
                return BoltResponse(status=200, body="")  # queued: a worker answers it
        await next_()
        return None

    return intake


def _typed_event(event: object) -> bool:
    return isinstance(event, dict) and isinstance(event.get("type"), str)
