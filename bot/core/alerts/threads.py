"""Threads the bot has answered in, and the ones people asked it to stop following.

A thread counts as answered once an answer card was delivered into it (any entry point); its
first answer's question (a person's question or an alert post) is the thread's topic, which
follow-ups are retrieved with.
"""

from __future__ import annotations

from dataclasses import dataclass

from rag import Store


@dataclass(frozen=True)
class ThreadTopic:
    question: str
    service: str | None


_TOPIC = """
SELECT question, service FROM answers
WHERE tenant_id = %(tenant)s AND team_id = %(team)s AND channel_id = %(channel)s
  AND thread_ts = %(thread)s AND message_ts IS NOT NULL AND NOT ephemeral
  AND NOT EXISTS (
      SELECT 1 FROM unfollowed_threads u
      WHERE u.tenant_id = %(tenant)s AND u.team_id = %(team)s
        AND u.channel_id = %(channel)s AND u.thread_ts = %(thread)s)
ORDER BY created_at
LIMIT 1
"""

_UNFOLLOW = """
INSERT INTO unfollowed_threads (tenant_id, team_id, channel_id, thread_ts, stopped_by)
VALUES (%(tenant)s, %(team)s, %(channel)s, %(thread)s, %(user)s)
ON CONFLICT (tenant_id, team_id, channel_id, thread_ts) DO NOTHING
"""


async def followed_thread(
    store: Store, tenant: str, team_id: str, channel_id: str, thread_ts: str
) -> ThreadTopic | None:
    """The topic of a thread the bot answered in and still follows; None otherwise."""
    params = {"tenant": tenant, "team": team_id, "channel": channel_id, "thread": thread_ts}
    async with store.pool.connection() as conn:
        cur = await conn.execute(_TOPIC, params)
        row = await cur.fetchone()
    return ThreadTopic(question=row[0], service=row[1]) if row else None


async def unfollow_thread(
    store: Store, tenant: str, team_id: str, channel_id: str, thread_ts: str, user_id: str
) -> None:
    params = {
        "tenant": tenant,
        "team": team_id,
        "channel": channel_id,
        "thread": thread_ts,
        "user": user_id,
    }
    async with store.pool.connection() as conn:
        await conn.execute(_UNFOLLOW, params)
