"""Multi-workspace OAuth over HTTP: install into our Postgres, answer with the installed token,
and forget the workspace when Slack says the app was uninstalled."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any

import aiohttp
import pytest
from cryptography.fernet import Fernet
from pydantic import SecretStr
from slack_sdk.web.async_client import AsyncWebClient

from bot.core.token_cipher import TokenCipher
from rag import FastEmbedder, IngestReport, RagService, Settings, Store, add_workspace
from rag.answering.answerers import ExtractiveAnswerer
from tests import credentials
from tests.fakes.slack_api import BOT_USER_ID, FakeSlack, SlackSender
from tests.slack_harness import served_app

SECRET = credentials.SLACK_SIGNING_SECRET
STATE_COOKIE = "slack-app-oauth-state"
KEY = Fernet.generate_key().decode()
CIPHER = TokenCipher.from_setting(SecretStr(KEY), sealing="test secrets")


async def installed_rows(store: Store, team_id: str) -> tuple[int, int]:
    async with store.pool.connection() as conn:
        counts = []
        for query in (
            "SELECT count(*) FROM slack_installations WHERE team_id = %s",
            "SELECT count(*) FROM slack_bots WHERE team_id = %s",
        ):
            cur = await conn.execute(query, (team_id,))
            row = await cur.fetchone()
            assert row is not None
            counts.append(int(row[0]))
    return counts[0], counts[1]


async def until(read: Callable[[], Awaitable[object]], expected: object) -> None:
    deadline = time.monotonic() + 10
    while (value := await read()) != expected:
        assert time.monotonic() < deadline, f"still {value!r}, expected {expected!r}"
        await asyncio.sleep(0.02)


def mention(text: str) -> dict[str, Any]:
    ts = f"{time.time():.6f}"
    return {"type": "app_mention", "user": "U_ALICE", "channel": "C_OPS", "ts": ts,
            "text": f"<@{BOT_USER_ID}> {text}"}  # fmt: skip


# slack_sdk 3.48 builds oauth.v2.access's client auth with aiohttp.BasicAuth, deprecated in
# aiohttp 3.14; harmless at run time, but an error under this suite's warnings-as-errors.
@pytest.mark.filterwarnings("ignore:BasicAuth is deprecated:DeprecationWarning")
async def test_install_answer_with_the_installed_token_then_uninstall(
    settings: Settings, store: Store, embedder: FastEmbedder, demo_corpus: IngestReport
) -> None:
    oauth_settings = settings.model_copy(
        update={
            "slack_signing_secret": SecretStr(SECRET),
            "slack_client_id": "1111.2222",
            "slack_client_secret": SecretStr(credentials.SLACK_CLIENT_SECRET),
            "encryption_keys": SecretStr(KEY),
            # The operator's path: the workspace is joined to acme by hand after the install.
            "self_service": False,
        }
    )
    service = RagService(
        store=store, embedder=embedder, answerer=ExtractiveAnswerer(), settings=oauth_settings
    )
    async with FakeSlack() as slack:
        # No token: every request gets the token of its workspace's installation.
        client = AsyncWebClient(base_url=slack.base_url)
        async with (
            served_app(settings=oauth_settings, service=service, store=store, client=client) as app,
            aiohttp.ClientSession() as http,
        ):
            base = app.url
            async with http.get(base + "/slack/install") as resp:
                assert resp.status == 200
                state = resp.cookies[STATE_COOKIE].value
                assert f"state={state}" in await resp.text()
            callback = f"{base}/slack/oauth_redirect?code=T_OAUTH&state={state}"
            cookie = {"Cookie": f"{STATE_COOKIE}={state}"}
            async with http.get(callback, headers=cookie) as resp:
                assert resp.status == 200
            async with http.get(callback, headers=cookie) as resp:
                assert resp.status >= 400  # a state is consumed once: no replayed installs
            [access] = slack.calls_to("oauth.v2.access")
            assert access.body["code"] == "T_OAUTH"
            assert await installed_rows(store, "T_OAUTH") == (1, 1)

            await add_workspace(store, "T_OAUTH", "acme")
            sender = SlackSender(app.events_url, SECRET)
            await sender.event(mention("payments are throwing 502s"), team_id="T_OAUTH")
            [post] = await slack.wait_for("chat.postMessage")
            # The installed token expires within Bolt's 2-hour window: rotated, saved, used.
            [_, refresh] = slack.calls_to("oauth.v2.access")
            assert refresh.body["grant_type"] == "refresh_token"
            assert post.token == "xoxb-T_OAUTH-rotated"
            async with store.pool.connection() as conn:
                cur = await conn.execute("SELECT bot FROM slack_bots WHERE team_id = 'T_OAUTH'")
                [(sealed,)] = await cur.fetchall()
            assert "xoxb-T_OAUTH-rotated" not in str(sealed)
            assert CIPHER.open(sealed)["bot_token"] == "xoxb-T_OAUTH-rotated"

            await sender.event({"type": "app_uninstalled"}, team_id="T_OAUTH")
            # Bolt's own revocation listener runs untracked: poll the store for its effect.
            await until(lambda: installed_rows(store, "T_OAUTH"), (0, 0))
            await sender.event(mention("payments are throwing 502s"), team_id="T_OAUTH")
            assert await app.tasks.drain(10) == 0
            assert len(slack.calls_to("chat.postMessage")) == 1  # no token left to answer with
