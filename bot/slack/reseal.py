"""``runbook secrets reencrypt``: seal every stored Slack token with the current (first) key.

Run after putting a new key first in ``RUNBOOK_ENCRYPTION_KEYS`` (the old key stays listed until
this has run), or once after upgrading from a release that stored tokens in plaintext.
"""

from __future__ import annotations

from typing import Any, LiteralString

from psycopg.types.json import Jsonb

from bot.core.token_cipher import TokenCipher
from rag import Store

# (table, its jsonb column): the ctid identifies the row read, the old value guards the write.
_TABLES: tuple[tuple[LiteralString, LiteralString], ...] = (
    (
        "SELECT ctid::text, installation FROM slack_installations FOR UPDATE",
        "UPDATE slack_installations SET installation = %s WHERE ctid = %s::tid",
    ),
    (
        "SELECT ctid::text, bot FROM slack_bots FOR UPDATE",
        "UPDATE slack_bots SET bot = %s WHERE ctid = %s::tid",
    ),
)


async def reseal_tokens(store: Store, cipher: TokenCipher) -> int:
    """Re-seal rows in plaintext or under a retired key; returns how many were rewritten."""
    rewritten = 0
    async with store.pool.connection() as conn, conn.transaction():
        for select, update in _TABLES:
            cur = await conn.execute(select)
            rows: list[tuple[str, dict[str, Any]]] = await cur.fetchall()
            for ctid, stored in rows:
                if cipher.needs_resealing(stored):
                    await conn.execute(update, (Jsonb(cipher.seal(cipher.open(stored))), ctid))
                    rewritten += 1
    return rewritten
