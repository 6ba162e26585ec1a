"""Intake dedupe: Events API deliveries are at-least-once, answers must be exactly-once.

A delivery's ``event_id`` is claimed set-if-absent in Postgres (shared by every replica), with an
in-process TTL cache in front so local retries and concurrent copies never reach the database.
Retry headers are deliberately ignored: a retry may be the only copy that ever arrived.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

import psycopg
from cachetools import TTLCache
from slack_bolt.response import BoltResponse

from bot.metrics import BotMetrics
from rag import Store

logger = logging.getLogger(__name__)

# Slack's last retry comes ~5 minutes after the first delivery; an hour leaves a wide margin.
_TTL_SECONDS = 3600
_PRUNE_EVERY = 1000

_CLAIM = """
INSERT INTO events_seen (event_id) VALUES (%(event_id)s)
ON CONFLICT (event_id) DO NOTHING
RETURNING event_id
"""
# Rows are kept a day, well past the TTL; event ids are never reused, so that is only hygiene.
_PRUNE = "DELETE FROM events_seen WHERE seen_at < now() - interval '1 day'"


class EventDeduper:
    """``first_delivery(event_id)`` is True exactly once per event id within the TTL.

    The cache is touched only from the event loop (cachetools is not thread-safe).
    """

    def __init__(self, store: Store, *, ttl_seconds: int = _TTL_SECONDS) -> None:
        self._store = store
        self._seen: TTLCache[str, bool] = TTLCache(maxsize=100_000, ttl=ttl_seconds)
        self._claims = 0

    async def first_delivery(self, event_id: str) -> bool:
        if event_id in self._seen:
            return False
        # Claimed before the first await, so a concurrent copy in this process stops above.
        self._seen[event_id] = True
        try:
            async with self._store.pool.connection() as conn:
                cur = await conn.execute(_CLAIM, {"event_id": event_id})
                claimed = await cur.fetchone() is not None
                self._claims += 1
                if self._claims % _PRUNE_EVERY == 0:
                    await conn.execute(_PRUNE)
        except (psycopg.Error, TimeoutError) as exc:
            # Answering twice is better than never: the local cache still stops local copies.
            logger.warning("event dedupe store unavailable (%s); processing %s", exc, event_id)
            return True
        return claimed


def request_kind(body: dict[str, Any]) -> str:
    """A bounded label for a delivery: the event type, ``command`` or the interaction type."""
    if body.get("type") == "event_callback":
        return str((body.get("event") or {}).get("type", "event"))
    if "command" in body:
        return "command"
    return str(body.get("type") or "other")


def build_intake_middleware(
    deduper: EventDeduper, metrics: BotMetrics
) -> Callable[..., Awaitable[BoltResponse | None]]:
    """The ``before_authorize`` middleware: count, then drop duplicates before any token lookup."""

    async def intake(
        body: dict[str, Any], next_: Callable[[], Awaitable[None]]
    ) -> BoltResponse | None:
        if body.get("type") == "event_callback" and not _typed_event(body.get("event")):
            # Signed but not a shape Slack sends; acked, so it is not retried, and dropped.
            logger.warning("dropped a malformed event delivery %s", body.get("event_id"))
            return BoltResponse(status=200, body="")
        metrics.events_received.labels(request_kind(body)).inc()
        event_id = body.get("event_id")
        if isinstance(event_id, str) and not await deduper.first_delivery(event_id):
            metrics.duplicates_dropped.inc()
            logger.info("dropped duplicate delivery of %s", event_id)
            # Returning a response (not None) is what stops Bolt here with a 200.
            return BoltResponse(status=200, body="")
        await next_()
        return None

    return intake


def _typed_event(event: object) -> bool:
    return isinstance(event, dict) and isinstance(event.get("type"), str)
