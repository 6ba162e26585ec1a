"""Intake dedupe for every surface: deliveries are at-least-once, answers must be exactly-once.

A delivery's key (a Slack ``event_id``, a Teams conversation and activity id) is claimed
set-if-absent in Postgres (shared by every replica), with an in-process TTL cache in front so
local retries and concurrent copies never reach the database. Retry headers are deliberately
ignored: a retry may be the only copy that ever arrived.
"""

from __future__ import annotations

import logging

import psycopg
from cachetools import TTLCache

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
