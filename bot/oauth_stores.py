"""Slack OAuth installations and install states in our Postgres (tables in 002_chat_app.sql).

Without explicit stores Bolt would silently fall back to files in the home directory whenever
SLACK_CLIENT_ID/SECRET are set, which loses every install on a container restart. Absent ids are
stored as '' so they can be key columns; an org-wide install is keyed by enterprise alone.
"""

from __future__ import annotations

import logging
import secrets
from datetime import datetime
from typing import Any

from psycopg.types.json import Jsonb
from slack_sdk.oauth.installation_store import Bot, Installation
from slack_sdk.oauth.installation_store.async_installation_store import AsyncInstallationStore
from slack_sdk.oauth.state_store.async_state_store import AsyncOAuthStateStore

from rag import Store

_log = logging.getLogger(__name__)

_SAVE_INSTALLATION = """
INSERT INTO slack_installations (client_id, enterprise_id, team_id, user_id, installation)
VALUES (%(client_id)s, %(enterprise_id)s, %(team_id)s, %(user_id)s, %(data)s)
ON CONFLICT (client_id, enterprise_id, team_id, user_id)
    DO UPDATE SET installation = excluded.installation, installed_at = now()
"""
_SAVE_BOT = """
INSERT INTO slack_bots (client_id, enterprise_id, team_id, bot)
VALUES (%(client_id)s, %(enterprise_id)s, %(team_id)s, %(data)s)
ON CONFLICT (client_id, enterprise_id, team_id)
    DO UPDATE SET bot = excluded.bot, installed_at = now()
"""
_FIND_INSTALLATION = """
SELECT installation FROM slack_installations
WHERE client_id = %(client_id)s AND enterprise_id = %(enterprise_id)s AND team_id = %(team_id)s
  AND (%(user_id)s::text IS NULL OR user_id = %(user_id)s)
ORDER BY installed_at DESC LIMIT 1
"""
_FIND_BOT = """
SELECT bot FROM slack_bots
WHERE client_id = %(client_id)s AND enterprise_id = %(enterprise_id)s AND team_id = %(team_id)s
"""


class PostgresInstallationStore(AsyncInstallationStore):
    def __init__(self, store: Store, *, client_id: str) -> None:
        self._store = store
        self._client_id = client_id

    @property
    def logger(self) -> logging.Logger:
        return _log

    async def async_save(self, installation: Installation) -> None:
        key = self._key(
            installation.enterprise_id, installation.team_id, installation.is_enterprise_install
        )
        data = _jsonable(installation.to_dict_for_copying())
        async with self._store.pool.connection() as conn, conn.transaction():
            await conn.execute(
                _SAVE_INSTALLATION,
                {**key, "user_id": installation.user_id or "", "data": Jsonb(data)},
            )
            if installation.bot_token is not None:
                bot = _jsonable(installation.to_bot().to_dict_for_copying())
                await conn.execute(_SAVE_BOT, {**key, "data": Jsonb(bot)})

    async def async_save_bot(self, bot: Bot) -> None:
        key = self._key(bot.enterprise_id, bot.team_id, bot.is_enterprise_install)
        data = _jsonable(bot.to_dict_for_copying())
        async with self._store.pool.connection() as conn:
            await conn.execute(_SAVE_BOT, {**key, "data": Jsonb(data)})

    async def async_find_bot(
        self,
        *,
        enterprise_id: str | None,
        team_id: str | None,
        is_enterprise_install: bool | None = False,
    ) -> Bot | None:
        key = self._key(enterprise_id, team_id, is_enterprise_install)
        async with self._store.pool.connection() as conn:
            cur = await conn.execute(_FIND_BOT, key)
            row = await cur.fetchone()
        return Bot(**row[0]) if row else None

    async def async_find_installation(
        self,
        *,
        enterprise_id: str | None,
        team_id: str | None,
        user_id: str | None = None,
        is_enterprise_install: bool | None = False,
    ) -> Installation | None:
        key = self._key(enterprise_id, team_id, is_enterprise_install)
        async with self._store.pool.connection() as conn:
            cur = await conn.execute(_FIND_INSTALLATION, {**key, "user_id": user_id})
            row = await cur.fetchone()
        if row is None:
            return None
        installation = Installation(**row[0])
        # A user's own install may predate the latest bot token (bolt-python#664).
        bot = await self.async_find_bot(
            enterprise_id=enterprise_id,
            team_id=team_id,
            is_enterprise_install=is_enterprise_install,
        )
        if bot is not None and bot.bot_token != installation.bot_token:
            installation.bot_id = bot.bot_id
            installation.bot_user_id = bot.bot_user_id
            installation.bot_token = bot.bot_token
            installation.bot_scopes = bot.bot_scopes
            installation.bot_refresh_token = bot.bot_refresh_token
            installation.bot_token_expires_at = bot.bot_token_expires_at
        return installation

    async def async_delete_bot(self, *, enterprise_id: str | None, team_id: str | None) -> None:
        async with self._store.pool.connection() as conn:
            await conn.execute(
                "DELETE FROM slack_bots WHERE client_id = %(client_id)s "
                "AND enterprise_id = %(enterprise_id)s AND team_id = %(team_id)s",
                self._key(enterprise_id, team_id, False),
            )

    async def async_delete_installation(
        self, *, enterprise_id: str | None, team_id: str | None, user_id: str | None = None
    ) -> None:
        async with self._store.pool.connection() as conn:
            await conn.execute(
                "DELETE FROM slack_installations WHERE client_id = %(client_id)s "
                "AND enterprise_id = %(enterprise_id)s AND team_id = %(team_id)s "
                "AND (%(user_id)s::text IS NULL OR user_id = %(user_id)s)",
                {**self._key(enterprise_id, team_id, False), "user_id": user_id},
            )

    def _key(
        self, enterprise_id: str | None, team_id: str | None, is_enterprise_install: bool | None
    ) -> dict[str, Any]:
        return {
            "client_id": self._client_id,
            "enterprise_id": enterprise_id or "",
            "team_id": "" if is_enterprise_install else team_id or "",
        }


class PostgresOAuthStateStore(AsyncOAuthStateStore):
    """One-time install states: consuming one deletes it, so a state cannot be replayed."""

    def __init__(self, store: Store, *, expiration_seconds: int = 600) -> None:
        self._store = store
        self._expiration_seconds = expiration_seconds

    @property
    def logger(self) -> logging.Logger:
        return _log

    async def async_issue(self, *args: Any, **kwargs: Any) -> str:
        state = secrets.token_urlsafe(32)
        async with self._store.pool.connection() as conn:
            await conn.execute(
                "INSERT INTO slack_oauth_states (state, expires_at) "
                "VALUES (%s, now() + make_interval(secs => %s))",
                (state, self._expiration_seconds),
            )
            # Abandoned installs leave states behind; sweep them on the next issue.
            await conn.execute("DELETE FROM slack_oauth_states WHERE expires_at < now()")
        return state

    async def async_consume(self, state: str) -> bool:
        async with self._store.pool.connection() as conn:
            cur = await conn.execute(
                "DELETE FROM slack_oauth_states "
                "WHERE state = %s AND expires_at > now() RETURNING 1",
                (state,),
            )
            return await cur.fetchone() is not None


def _jsonable(data: dict[str, Any]) -> dict[str, Any]:
    """slack_sdk's dicts hold datetimes; its constructors accept ISO strings back."""
    return {k: v.isoformat() if isinstance(v, datetime) else v for k, v in data.items()}
