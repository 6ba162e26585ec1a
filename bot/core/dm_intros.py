"""Who has already had the bot's DM introduction (durable, once per person and workspace)."""

from __future__ import annotations

from rag import Store


async def first_direct_message(store: Store, team_id: str, user_id: str) -> bool:
    """True exactly once per person and workspace, whichever replica asks."""
    async with store.pool.connection() as conn:
        cur = await conn.execute(
            "INSERT INTO dm_intros (team_id, user_id) VALUES (%s, %s) "
            "ON CONFLICT DO NOTHING RETURNING 1",
            (team_id, user_id),
        )
        return await cur.fetchone() is not None
