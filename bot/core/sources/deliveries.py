"""Signed source webhooks already answered: a replay of one is a duplicate, for 30 days.

A push webhook's signature covers its body and nothing else (no time, and the delivery id
headers — GitHub's ``X-GitHub-Delivery``, GitLab's ``X-Gitlab-Event-UUID``, Atlassian's
``X-Atlassian-Webhook-Identifier`` — are not signed), so whoever saw one delivery can send it
again at will. Each verified body is kept by its SHA-256 for ``DELIVERY_RETENTION_DAYS``, far
past the job rows that would otherwise dedupe it (``RUNBOOK_JOB_RETENTION_H``).
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Mapping

from rag import Store

DELIVERY_RETENTION_DAYS = 30
_DELIVERY_HEADERS = ("X-GitHub-Delivery", "X-Gitlab-Event-UUID", "X-Atlassian-Webhook-Identifier")

_SEEN = """
SELECT 1 FROM source_deliveries
WHERE source_id = %(source)s AND body_sha256 = %(digest)s
  AND received_at >= now() - make_interval(days => %(days)s)
"""

_REMEMBER = """
INSERT INTO source_deliveries (source_id, body_sha256, delivery_id)
VALUES (%(source)s, %(digest)s, %(delivery)s)
ON CONFLICT (source_id, body_sha256) DO UPDATE SET received_at = now(),
    delivery_id = EXCLUDED.delivery_id
"""

_FORGET_OLD = """
DELETE FROM source_deliveries
WHERE source_id = %(source)s AND received_at < now() - make_interval(days => %(days)s)
"""


def delivery_id(headers: Mapping[str, str]) -> str | None:
    """The forge's id of a delivery (for the logs: it is not signed, so it keys nothing)."""
    for name in _DELIVERY_HEADERS:
        value = headers.get(name)
        if value:
            return value[:100]
    return None


async def delivered_before(store: Store, source_id: uuid.UUID, body: bytes) -> bool:
    """True when this signed body reached the source within the retention window."""
    params = {
        "source": source_id,
        "digest": hashlib.sha256(body).hexdigest(),
        "days": DELIVERY_RETENTION_DAYS,
    }
    async with store.pool.connection() as conn:
        cur = await conn.execute(_SEEN, params)
        return await cur.fetchone() is not None


async def remember_delivery(
    store: Store, source_id: uuid.UUID, body: bytes, delivery: str | None
) -> None:
    """Keep this answered body (and drop the source's deliveries past the window)."""
    params = {
        "source": source_id,
        "digest": hashlib.sha256(body).hexdigest(),
        "delivery": delivery,
        "days": DELIVERY_RETENTION_DAYS,
    }
    async with store.pool.connection() as conn:
        await conn.execute(_FORGET_OLD, params)
        await conn.execute(_REMEMBER, params)
