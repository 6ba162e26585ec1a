"""Slack Connect: a channel shared with another organisation, signed exactly as Slack sends it.

The tenant is the installation's (``authorizations[0]``, the token Bolt answers with), never the
outer ``team_id``; a user of the other organisation gets a private "not connected" card and
nothing is retrieved for them, from either tenant.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest_asyncio

from rag import FastEmbedder, IngestReport, Settings, Store, add_workspace
from rag.answering.answerers import ExtractiveAnswerer
from tests.fakes.slack_api import BOT_USER_ID
from tests.test_slack_interactions import CHANNEL, PAYMENTS_502, Harness, buttons, running_bot


def shared_channel() -> str:
    """A fresh shared channel per test: answers stay in the table between tests."""
    return f"C_shared_{uuid.uuid4().hex[:8].upper()}"


@pytest_asyncio.fixture(loop_scope="session")
async def bot(
    settings: Settings, store: Store, embedder: FastEmbedder, demo_corpus: IngestReport
) -> AsyncIterator[Harness]:
    # The other organisation is a customer too: its workspace maps to its own tenant.
    await add_workspace(store, "T_GLOBEX", "globex")
    async with running_bot(settings, store, embedder, ExtractiveAnswerer()) as harness:
        yield harness


def connect_mention(channel: str, *, user: str, user_team: str) -> str:
    """An app_mention in an externally shared channel, delivered for acme's installation."""
    ts = f"{time.time():.6f}"
    return json.dumps(
        {
            "type": "event_callback",
            "team_id": "T_GLOBEX",  # where the event happened, not who installed the app
            "enterprise_id": None,
            "api_app_id": "A_RUNBOOK",
            "event_id": f"Ev{uuid.uuid4().hex[:12]}",
            "event_time": int(time.time()),
            "is_ext_shared_channel": True,
            "event_context": "4-eyJldCI6ImFwcF9tZW50aW9uIn0",
            "authorizations": [
                {
                    "enterprise_id": None,
                    "team_id": "T_ACME",
                    "user_id": BOT_USER_ID,
                    "is_bot": True,
                    "is_enterprise_install": False,
                }
            ],
            "event": {
                "type": "app_mention",
                "user": user,
                "text": f"<@{BOT_USER_ID}> {PAYMENTS_502}",
                "ts": ts,
                "channel": channel,
                "team": "T_GLOBEX",
                "user_team": user_team,
                "source_team": user_team,
            },
        }
    )


async def test_mention_by_another_organisations_user_gets_a_private_not_connected(
    bot: Harness,
) -> None:
    shared = shared_channel()
    raw = connect_mention(shared, user="U_GLOBEX_EVE", user_team="T_GLOBEX")
    assert (await bot.sender.post(raw, "application/json")).status == 200

    [private] = await bot.settle("chat.postEphemeral")
    assert private.body["user"] == "U_GLOBEX_EVE" and private.body["channel"] == shared
    assert "isn't connected for you" in str(private.body["blocks"])
    assert "T_ACME" not in private.body["text"] + str(private.body["blocks"])
    assert bot.slack.calls_to("chat.postMessage", ok=None) == []
    assert await answers_in(bot.store, shared) == []


async def test_mention_by_the_installing_workspaces_user_answers_from_its_tenant(
    bot: Harness,
) -> None:
    shared = shared_channel()
    raw = connect_mention(shared, user="U_ALICE", user_team="T_ACME")
    assert (await bot.sender.post(raw, "application/json")).status == 200

    [post] = await bot.settle("chat.postMessage")
    assert post.body["channel"] == shared and "Sources" in str(post.body["blocks"])
    assert await answers_in(bot.store, shared) == ["acme"]


async def test_command_from_another_organisations_workspace_is_refused_privately(
    bot: Harness,
) -> None:
    shared = shared_channel()
    fields = {
        "command": "/runbook",
        "text": PAYMENTS_502,
        "team_id": "T_GLOBEX",
        "channel_id": shared,
        "user_id": "U_GLOBEX_EVE",
        "api_app_id": "A_RUNBOOK",
        "is_ext_shared_channel": "true",
        "response_url": bot.slack.response_url("cmd"),
        "trigger_id": "trigger-1",
    }
    assert (await bot.sender.command(fields)).status == 200

    reply = await bot.reply_for("cmd")
    assert reply.body["response_type"] == "ephemeral"
    assert "isn't connected for you" in str(reply.body["blocks"])
    assert await answers_in(bot.store, shared) == []


async def test_shortcut_by_another_organisations_user_is_refused_privately(bot: Harness) -> None:
    shared = shared_channel()
    alert = {"type": "message", "ts": "1700000900.000100", "text": PAYMENTS_502}
    payload: dict[str, Any] = {
        "type": "message_action",
        "callback_id": "ask_runbooks",
        "team": {"id": "T_GLOBEX", "domain": "globex"},
        "user": {"id": "U_GLOBEX_EVE", "team_id": "T_GLOBEX"},
        "channel": {"id": shared},
        "is_enterprise_install": False,
        "message": alert,
        "response_url": bot.slack.response_url("shortcut"),
        "trigger_id": "trigger-3",
    }
    assert (await bot.sender.interaction(payload)).status == 200

    reply = await bot.reply_for("shortcut")
    assert "isn't connected for you" in str(reply.body["blocks"])
    assert bot.slack.calls_to("chat.postMessage", ok=None) == []
    assert await answers_in(bot.store, shared) == []


async def test_button_click_by_another_organisations_user_is_refused_privately(
    bot: Harness,
) -> None:
    post = await bot.mention(PAYMENTS_502)
    action_id, answer_id = next(
        (k, v) for k, v in buttons(post).items() if k.startswith("show_quote")
    )
    payload = {
        "type": "block_actions",
        "team": {"id": "T_GLOBEX"},
        "user": {"id": "U_GLOBEX_EVE", "team_id": "T_GLOBEX"},
        "api_app_id": "A_RUNBOOK",
        "container": {"type": "message", "message_ts": post.reply["ts"], "channel_id": CHANNEL},
        "channel": {"id": CHANNEL},
        "response_url": bot.slack.response_url("click"),
        "actions": [{"action_id": action_id, "block_id": "b1", "value": answer_id}],
    }
    assert (await bot.sender.interaction(payload)).status == 200

    reply = await bot.reply_for("click")
    assert "not connected runbook-bot" in reply.body["text"]
    assert bot.slack.calls_to("chat.update", ok=None) == []


async def answers_in(store: Store, channel: str) -> list[str]:
    async with store.pool.connection() as conn:
        cur = await conn.execute(
            "SELECT tenant_id FROM answers WHERE channel_id = %s ORDER BY created_at", (channel,)
        )
        return [str(row[0]) for row in await cur.fetchall()]
