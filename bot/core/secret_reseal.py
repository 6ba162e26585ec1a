"""``runbook secrets reencrypt``: every secret sealed with ``RUNBOOK_ENCRYPTION_KEYS``, sealed
again with the first key, so the old key can be dropped from the setting.

Each owner of a table with sealed values names its columns (``SealedColumn``): the core its
sources' credentials and webhook secrets (``SOURCE_SECRETS``), each surface its own (Slack's
installations and bots, Teams' Graph clientStates); ``runbook secrets reencrypt`` passes them
all. One transaction: a value is re-sealed only if it is still the one read. A value no listed
key opens is left as it is and named in the report, and the rest are re-sealed all the same.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, LiteralString

from psycopg import sql
from psycopg.types.json import Jsonb

from bot.core.token_cipher import SecretUnreadableError, TokenCipher
from rag import Store


@dataclass(frozen=True)
class SealedColumn:
    """A jsonb column of sealed (or, from before sealing, plaintext) objects. ``names`` is an
    SQL expression over the row that tells the operator which row it is (never a secret)."""

    table: LiteralString
    column: LiteralString
    names: LiteralString
    what: str


@dataclass
class ResealReport:
    resealed: int = 0
    # "<what> of <row>" for each value no key in the setting opens.
    unreadable: list[str] = field(default_factory=list)


SOURCE_SECRETS = (
    SealedColumn("sources", "credential", "tenant_id || '/' || name", "credential of source"),
    SealedColumn(
        "sources", "webhook_secret", "tenant_id || '/' || name", "webhook secret of source"
    ),
)


async def reseal_secrets(
    store: Store, cipher: TokenCipher, columns: tuple[SealedColumn, ...]
) -> ResealReport:
    """Re-seal with the first key every value in plaintext or under another listed key."""
    report = ResealReport()
    async with store.pool.connection() as conn, conn.transaction():
        for sealed in columns:
            names = {
                "table": sql.Identifier(sealed.table),
                "column": sql.Identifier(sealed.column),
                "names": sql.SQL(sealed.names),
            }
            select = sql.SQL(
                "SELECT ctid::text, {names}, {column} FROM {table} "
                "WHERE {column} IS NOT NULL ORDER BY 2 FOR UPDATE"
            ).format(**names)
            update = sql.SQL("UPDATE {table} SET {column} = %s WHERE ctid = %s::tid").format(
                **names
            )
            cur = await conn.execute(select)
            rows: list[tuple[str, str, dict[str, Any]]] = await cur.fetchall()
            for ctid, row_name, stored in rows:
                if not cipher.needs_resealing(stored):
                    continue
                try:
                    opened = cipher.open(stored, what=f"the {sealed.what} {row_name}")
                except SecretUnreadableError:
                    report.unreadable.append(f"{sealed.what} {row_name}")
                    continue
                await conn.execute(update, (Jsonb(cipher.seal(opened)), ctid))
                report.resealed += 1
    return report
