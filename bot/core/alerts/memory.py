"""What the bot remembers about alerts it answered unprompted: repeat windows and mutes.

Both are durable and shared by every replica: a repeat is recognised by an atomic claim on the
alert's fingerprint in Postgres, not by anything held in one process.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from bot.core.retention import hashed_alert_name
from rag import Store

# Claimed when new, or when its last claim is older than the window; otherwise nobody gets it.
# Until its card is posted, a claim's answer_id holds the claiming job's id (answer ids never
# collide with it), so the same job run again knows the claim as its own.
_CLAIM = """
INSERT INTO alert_fingerprints (tenant_id, team_id, channel_id, fingerprint, alert_name, answer_id)
VALUES (%(tenant)s, %(team)s, %(channel)s, %(fingerprint)s, %(name)s, %(claimant)s)
ON CONFLICT (tenant_id, team_id, channel_id, fingerprint) DO UPDATE
    SET claimed_at = now(), alert_name = excluded.alert_name, answer_id = excluded.answer_id
    WHERE alert_fingerprints.claimed_at < now() - make_interval(mins => %(window)s)
RETURNING 1
"""

_CLAIMED_BY = """
SELECT 1 FROM alert_fingerprints
WHERE tenant_id = %(tenant)s AND team_id = %(team)s AND channel_id = %(channel)s
  AND fingerprint = %(fingerprint)s AND answer_id IN (%(claimant)s, %(answer_id)s)
"""

_MUTE = """
INSERT INTO muted_alerts (tenant_id, team_id, channel_id, alert_name, muted_by)
SELECT tenant_id, team_id, channel_id, alert_name, %(user)s
FROM alert_fingerprints WHERE tenant_id = %(tenant)s AND answer_id = %(answer_id)s
ON CONFLICT (tenant_id, team_id, channel_id, alert_name)
    DO UPDATE SET muted_by = excluded.muted_by, muted_at = now()
RETURNING alert_name
"""


@dataclass(frozen=True)
class AlertKey:
    """Where an alert was posted and what it is."""

    tenant: str
    team_id: str
    channel_id: str
    fingerprint: str
    name: str


class AlertMemory:
    def __init__(self, store: Store, *, repeat_window_min: int) -> None:
        self._store = store
        self._window = repeat_window_min

    async def is_muted(self, key: AlertKey) -> bool:
        """Muted by name, or by the name's hash once retention replaced the text."""
        names = [key.name, hashed_alert_name(key.name)]
        async with self._store.pool.connection() as conn:
            cur = await conn.execute(
                "SELECT 1 FROM muted_alerts WHERE tenant_id = %s AND team_id = %s "
                "AND channel_id = %s AND alert_name = ANY(%s)",
                (key.tenant, key.team_id, key.channel_id, names),
            )
            return await cur.fetchone() is not None

    async def claim(
        self, key: AlertKey, claimant: uuid.UUID, *, answer_id: str | None = None
    ) -> bool:
        """True for the first sighting of this alert in this channel within the window, and
        again for the job that claimed it (``claimant``, run again after a crash; its claim
        may already hold the job's ``answer_id``)."""
        params = {
            "tenant": key.tenant,
            "team": key.team_id,
            "channel": key.channel_id,
            "fingerprint": key.fingerprint,
            "name": key.name,
            "window": self._window,
            "claimant": claimant,
            "answer_id": uuid.UUID(answer_id) if answer_id else None,
        }
        async with self._store.pool.connection() as conn:
            cur = await conn.execute(_CLAIM, params)
            if await cur.fetchone() is not None:
                return True
            cur = await conn.execute(_CLAIMED_BY, params)
            return await cur.fetchone() is not None

    async def record_answer(self, key: AlertKey, answer_id: str) -> None:
        """The card posted for this claim: what its "Mute this alert here" button refers to."""
        async with self._store.pool.connection() as conn:
            await conn.execute(
                "UPDATE alert_fingerprints SET answer_id = %s WHERE tenant_id = %s "
                "AND team_id = %s AND channel_id = %s AND fingerprint = %s",
                (uuid.UUID(answer_id), key.tenant, key.team_id, key.channel_id, key.fingerprint),
            )

    async def mute(self, tenant: str, answer_id: str, user_id: str) -> str | None:
        """Mute the alert behind an answer card in its channel; returns the alert's name, or
        None when the card is not an alert answer of this tenant."""
        try:
            key = uuid.UUID(answer_id)
        except ValueError:
            return None
        async with self._store.pool.connection() as conn:
            cur = await conn.execute(_MUTE, {"tenant": tenant, "answer_id": key, "user": user_id})
            row = await cur.fetchone()
        return str(row[0]) if row else None
