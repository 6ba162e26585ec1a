"""Slack OAuth installations and install states in our Postgres (tables in 002_chat_app.sql).

Tokens are sealed at rest (``bot.core.token_cipher``): the installation and bot objects are
stored encrypted; rows written before encryption, or sealed with a retired key, are re-sealed
with the current key when read (``runbook secrets reencrypt`` does all of them at once).

Without explicit stores Bolt would silently fall back to files in the home directory whenever
SLACK_CLIENT_ID/SECRET are set, which loses every install on a container restart. Absent ids are
stored as '' so they can be key columns; an org-wide install is keyed by enterprise alone.

Token rotation across replicas: Bolt finds an installation, spends its refresh token with Slack
and saves the result. Every installation handed out is stamped with a digest of the refresh
token it holds (Bolt's rotator copies ``custom_values`` into the rotated copy); a save takes a
per-installation advisory lock and re-reads the stored refresh token, and a rotation derived
from a token that another replica has already rotated away is not stored, so the rotated token
stays the one every replica reads next.
"""

from __future__ import annotations

import hashlib
import logging
import secrets
from datetime import datetime
from typing import Any

from psycopg import AsyncConnection
from psycopg.types.json import Jsonb
from slack_sdk.oauth.installation_store import Bot, Installation
from slack_sdk.oauth.installation_store.async_installation_store import AsyncInstallationStore
from slack_sdk.oauth.state_store.async_state_store import AsyncOAuthStateStore

from bot.core.token_cipher import TokenCipher
from rag import Store

_log = logging.getLogger(__name__)
# How a token that no key in RUNBOOK_ENCRYPTION_KEYS opens is named in the error.
_TOKEN = "a stored Slack token"

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
SELECT installation, user_id FROM slack_installations
WHERE client_id = %(client_id)s AND enterprise_id = %(enterprise_id)s AND team_id = %(team_id)s
  AND (%(user_id)s::text IS NULL OR user_id = %(user_id)s)
ORDER BY installed_at DESC LIMIT 1
"""
# Serialises saves of one installation across replicas until the transaction ends.
_LOCK_INSTALLATION = """
SELECT pg_advisory_xact_lock(
    hashtext(concat_ws('/', %(client_id)s::text, %(enterprise_id)s::text, %(team_id)s::text))
)
"""
_STORED_BOT = """
SELECT bot FROM slack_bots
WHERE client_id = %(client_id)s AND enterprise_id = %(enterprise_id)s AND team_id = %(team_id)s
"""
# custom_values key: digest of the refresh token an installation was read with (never the token).
_ROTATION_BASE = "runbook_rotation_base"
_FIND_BOT = _STORED_BOT
# Re-seal a row read in plaintext or under a retired key, unless another replica changed it.
_RESEAL_BOT = """
UPDATE slack_bots SET bot = %(sealed)s
WHERE client_id = %(client_id)s AND enterprise_id = %(enterprise_id)s AND team_id = %(team_id)s
  AND bot = %(stored)s
"""
_RESEAL_INSTALLATION = """
UPDATE slack_installations SET installation = %(sealed)s
WHERE client_id = %(client_id)s AND enterprise_id = %(enterprise_id)s AND team_id = %(team_id)s
  AND user_id = %(user_id)s AND installation = %(stored)s
"""


class PostgresInstallationStore(AsyncInstallationStore):
    def __init__(self, store: Store, *, client_id: str, cipher: TokenCipher) -> None:
        self._store = store
        self._client_id = client_id
        self._cipher = cipher

    @property
    def logger(self) -> logging.Logger:
        return _log

    async def async_save(self, installation: Installation) -> None:
        key = self._key(
            installation.enterprise_id, installation.team_id, installation.is_enterprise_install
        )
        base = installation.custom_values.pop(_ROTATION_BASE, None)
        data = self._cipher.seal(_jsonable(installation.to_dict_for_copying()))
        async with self._store.pool.connection() as conn, conn.transaction():
            if await self._is_stale_rotation(conn, key, base):
                return
            await conn.execute(
                _SAVE_INSTALLATION,
                {**key, "user_id": installation.user_id or "", "data": Jsonb(data)},
            )
            if installation.bot_token is not None:
                bot = self._cipher.seal(_jsonable(installation.to_bot().to_dict_for_copying()))
                await conn.execute(_SAVE_BOT, {**key, "data": Jsonb(bot)})

    async def async_save_bot(self, bot: Bot) -> None:
        key = self._key(bot.enterprise_id, bot.team_id, bot.is_enterprise_install)
        base = bot.custom_values.pop(_ROTATION_BASE, None)
        data = self._cipher.seal(_jsonable(bot.to_dict_for_copying()))
        async with self._store.pool.connection() as conn, conn.transaction():
            if await self._is_stale_rotation(conn, key, base):
                return
            await conn.execute(_SAVE_BOT, {**key, "data": Jsonb(data)})

    async def _is_stale_rotation(
        self, conn: AsyncConnection[Any], key: dict[str, Any], base: object
    ) -> bool:
        """Locks the installation; True if ``base`` (what a rotation started from) is outdated."""
        await conn.execute(_LOCK_INSTALLATION, key)
        if not isinstance(base, str):
            return False  # a fresh install, or a save that did not come from our find
        cur = await conn.execute(_STORED_BOT, key)
        row = await cur.fetchone()
        if (
            row is None
            or _digest(self._cipher.open(row[0], what=_TOKEN).get("bot_refresh_token")) == base
        ):
            return False
        _log.info("another replica already rotated this installation's token; keeping its save")
        return True

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
            if row is None:
                return None
            data = self._cipher.open(row[0], what=_TOKEN)
            if self._cipher.needs_resealing(row[0]):
                sealed = self._cipher.seal(data)
                await conn.execute(
                    _RESEAL_BOT, {**key, "sealed": Jsonb(sealed), "stored": Jsonb(row[0])}
                )
        bot = Bot(**data)
        bot.custom_values[_ROTATION_BASE] = _digest(bot.bot_refresh_token)
        return bot

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
            stored, stored_user = row
            data = self._cipher.open(stored, what=_TOKEN)
            if self._cipher.needs_resealing(stored):
                params = {**key, "user_id": stored_user, "stored": Jsonb(stored)}
                await conn.execute(
                    _RESEAL_INSTALLATION, {**params, "sealed": Jsonb(self._cipher.seal(data))}
                )
        installation = Installation(**data)
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
        installation.custom_values[_ROTATION_BASE] = _digest(installation.bot_refresh_token)
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


def _digest(refresh_token: str | None) -> str:
    return hashlib.sha256((refresh_token or "").encode()).hexdigest()[:16]


def _jsonable(data: dict[str, Any]) -> dict[str, Any]:
    """slack_sdk's dicts hold datetimes; its constructors accept ISO strings back."""
    return {k: v.isoformat() if isinstance(v, datetime) else v for k, v in data.items()}
