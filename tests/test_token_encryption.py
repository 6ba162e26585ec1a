"""Slack OAuth tokens at rest: sealed in Postgres, readable after a key rotation, and no OAuth
mode without a key."""

from __future__ import annotations

import time
import uuid

import pytest
from cryptography.fernet import Fernet
from psycopg.types.json import Jsonb
from pydantic import SecretStr
from slack_sdk.oauth.installation_store import Installation

from bot.core.jobs.queue import JobQueue
from bot.core.jobs.worker import JobHandlers
from bot.core.metrics import BotMetrics
from bot.core.secret_reseal import reseal_secrets
from bot.core.tasks import BackgroundTasks
from bot.core.token_cipher import TokenCipher
from bot.slack.app import build_app
from bot.slack.modes import slack_mode
from bot.slack.oauth_stores import PostgresInstallationStore
from bot.slack.reseal import SLACK_SECRETS
from rag import ConfigurationError, RagService, Settings, Store
from tests import credentials

CLIENT_ID = "1111.2222"
KEY_OLD, KEY_NEW = Fernet.generate_key().decode(), Fernet.generate_key().decode()


def cipher(*keys: str) -> TokenCipher:
    return TokenCipher.from_setting(SecretStr(",".join(keys)), sealing="test secrets")


def installation(team: str) -> Installation:
    return Installation(
        app_id="A_RUNBOOK",
        team_id=team,
        user_id="U_INSTALLER",
        bot_token=f"xoxb-{team}-secret-bot-token",
        bot_refresh_token=f"xoxe-{team}-secret-refresh",
        bot_token_expires_at=int(time.time()) + 43200,
        user_token=f"xoxp-{team}-secret-user-token",
        bot_id="BBOT",
        bot_user_id="UBOT",
    )


async def raw_rows(store: Store, team: str) -> str:
    async with store.pool.connection() as conn:
        cur = await conn.execute(
            "SELECT i.installation::text, b.bot::text FROM slack_installations i "
            "JOIN slack_bots b USING (client_id, enterprise_id, team_id) WHERE i.team_id = %s",
            (team,),
        )
        rows = await cur.fetchall()
    assert rows
    return repr(rows)


def team_id() -> str:
    return f"T_SEAL{uuid.uuid4().hex[:8].upper()}"


async def test_stored_tokens_are_not_readable_in_the_table(store: Store) -> None:
    team = team_id()
    installations = PostgresInstallationStore(store, client_id=CLIENT_ID, cipher=cipher(KEY_OLD))
    await installations.async_save(installation(team))

    rows = await raw_rows(store, team)
    # Only whole token values are checked: a three-letter fragment such as "xox" turns up in
    # base64 ciphertext by chance about once in a few hundred runs.
    saved = installation(team)
    plaintexts = [saved.bot_token, saved.bot_refresh_token, saved.user_token]
    assert not [token for token in plaintexts if token and token in rows]
    assert "-secret-" not in rows and '"sealed"' in rows
    found = await installations.async_find_installation(enterprise_id=None, team_id=team)
    assert found is not None and found.bot_token == f"xoxb-{team}-secret-bot-token"
    assert found.user_token == f"xoxp-{team}-secret-user-token"


async def test_rotated_key_reads_old_rows_and_reencrypt_moves_them_to_the_new_key(
    store: Store,
) -> None:
    # reencrypt walks whole tables, as it must in a deployment; in this shared test database
    # other tests' rows are sealed with keys of their own, which no deployment would hold.
    async with store.pool.connection() as conn:
        await conn.execute("DELETE FROM slack_bots")
        await conn.execute("DELETE FROM slack_installations")
    team = team_id()
    old = PostgresInstallationStore(store, client_id=CLIENT_ID, cipher=cipher(KEY_OLD))
    await old.async_save(installation(team))

    rotated = cipher(KEY_NEW, KEY_OLD)
    first = await reseal_secrets(store, rotated, SLACK_SECRETS)
    again = await reseal_secrets(store, rotated, SLACK_SECRETS)
    assert first.resealed >= 2 and not first.unreadable  # this team's installation and bot
    assert (again.resealed, again.unreadable) == (0, [])

    new_only = PostgresInstallationStore(store, client_id=CLIENT_ID, cipher=cipher(KEY_NEW))
    bot = await new_only.async_find_bot(enterprise_id=None, team_id=team)
    assert bot is not None and bot.bot_refresh_token == f"xoxe-{team}-secret-refresh"
    with pytest.raises(ConfigurationError, match="runbook secrets reencrypt"):
        await old.async_find_bot(enterprise_id=None, team_id=team)  # the old key alone


async def test_a_plaintext_row_from_before_encryption_is_sealed_when_read(store: Store) -> None:
    team = team_id()
    plain = installation(team).to_bot().to_dict_for_copying()
    plain = {k: v.isoformat() if hasattr(v, "isoformat") else v for k, v in plain.items()}
    async with store.pool.connection() as conn:
        await conn.execute(
            "INSERT INTO slack_bots (client_id, team_id, bot) VALUES (%s, %s, %s)",
            (CLIENT_ID, team, Jsonb(plain)),
        )
    installations = PostgresInstallationStore(store, client_id=CLIENT_ID, cipher=cipher(KEY_NEW))

    bot = await installations.async_find_bot(enterprise_id=None, team_id=team)
    assert bot is not None and bot.bot_token == f"xoxb-{team}-secret-bot-token"
    async with store.pool.connection() as conn:
        cur = await conn.execute("SELECT bot::text FROM slack_bots WHERE team_id = %s", (team,))
        row = await cur.fetchone()
    assert row is not None and f"xoxb-{team}-secret-bot-token" not in row[0]


def oauth_settings(settings: Settings, keys: str | None) -> Settings:
    return settings.model_copy(
        update={
            "slack_signing_secret": SecretStr(credentials.SLACK_SIGNING_SECRET),
            "slack_client_id": CLIENT_ID,
            "slack_client_secret": SecretStr(credentials.SLACK_CLIENT_SECRET),
            "encryption_keys": SecretStr(keys) if keys is not None else None,
        }
    )


async def test_oauth_mode_refuses_to_start_without_an_encryption_key(
    settings: Settings, store: Store, service: RagService
) -> None:
    mode = slack_mode(oauth_settings(settings, None))
    assert mode.kind is None and "RUNBOOK_ENCRYPTION_KEYS" in mode.explain()
    jobs = await JobQueue.open(store, settings)
    try:
        for keys in (None, "", "not-a-fernet-key"):
            with pytest.raises(ConfigurationError, match="RUNBOOK_ENCRYPTION_KEYS") as refused:
                build_app(
                    settings=oauth_settings(settings, keys),
                    service=service,
                    store=store,
                    client=None,
                    tasks=BackgroundTasks(),
                    metrics=BotMetrics(),
                    jobs=jobs,
                    job_handlers=JobHandlers(),
                )
            assert "not-a-fernet-key" not in str(refused.value)
    finally:
        await jobs.close()
    assert slack_mode(oauth_settings(settings, KEY_NEW)).kind == "http"


def test_a_missing_key_is_explained_by_what_the_caller_seals() -> None:
    with pytest.raises(ConfigurationError) as refused:
        TokenCipher.from_setting(None, sealing="Source credentials and webhook secrets")
    message = str(refused.value)
    assert message.startswith("Source credentials and webhook secrets are encrypted at rest")
    assert "RUNBOOK_ENCRYPTION_KEYS" in message and "Slack" not in message
