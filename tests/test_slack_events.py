"""The real app over HTTP against a fake Slack: mentions, intake dedupe, signatures, tenancy,
delivery retries, health and metrics. Requests are signed exactly as Slack signs them."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import aiohttp
import pytest_asyncio
from pydantic import SecretStr
from slack_sdk.web.async_client import AsyncWebClient

from bot.app import build_app
from bot.metrics import BotMetrics
from bot.server import EVENTS_PATH, build_web_app, serving
from bot.tasks import BackgroundTasks
from rag import FastEmbedder, IngestReport, RagService, Settings, Store, add_workspace
from rag.answerers import build_answerer
from tests.fakes.slack_api import (
    BOT_USER_ID,
    FakeSlack,
    SlackCall,
    SlackSender,
    api_error,
    connection_reset,
    rate_limited,
    server_error,
)

SECRET = "test-signing-secret"
CHANNEL = "C_INCIDENT"
PAYMENTS_502 = "payments are throwing 502s, what do I check first?"
# Kafka runbooks exist only for acme (corpus/README.md: topics only one tenant has).
KAFKA_LAG = "fulfilment consumers are way behind on order-events, how do I see the lag per partition?"


@dataclass
class Harness:
    slack: FakeSlack
    sender: SlackSender
    url: str
    tasks: BackgroundTasks
    metrics: BotMetrics
    store: Store


@pytest_asyncio.fixture(loop_scope="session")
async def bot(
    settings: Settings, store: Store, embedder: FastEmbedder, demo_corpus: IngestReport
) -> AsyncIterator[Harness]:
    await add_workspace(store, "T_ACME", "acme")
    await add_workspace(store, "T_GLOBEX", "globex")
    slack_settings = settings.model_copy(update={"slack_signing_secret": SecretStr(SECRET)})
    service = RagService(
        store=store, embedder=embedder, answerer=build_answerer(settings), settings=slack_settings
    )
    async with FakeSlack() as slack:
        tasks, metrics = BackgroundTasks(), BotMetrics()
        client = AsyncWebClient(token="xoxb-T_ACME", base_url=slack.base_url)
        app = build_app(
            settings=slack_settings,
            service=service,
            store=store,
            client=client,
            tasks=tasks,
            metrics=metrics,
        )
        web_app = build_web_app(
            app, store=store, rag_metrics=service.metrics, bot_metrics=metrics
        )
        async with serving(web_app, host="127.0.0.1", port=0) as port:
            url = f"http://127.0.0.1:{port}"
            yield Harness(slack, SlackSender(url + EVENTS_PATH, SECRET), url, tasks, metrics, store)
            assert await tasks.drain(10) == 0


def mention(text: str, *, ts: str | None = None, **extra: Any) -> dict[str, Any]:
    ts = ts or f"{time.time():.6f}"
    return {
        "type": "app_mention",
        "user": "U_ALICE",
        "text": f"<@{BOT_USER_ID}> {text}".strip(),
        "ts": ts,
        "event_ts": ts,
        "channel": CHANNEL,
        **extra,
    }


async def stored_answer_row(store: Store, tenant: str, message_ts: str) -> dict[str, Any]:
    async with store.pool.connection() as conn:
        cur = await conn.execute(
            "SELECT question, service, result FROM answers "
            "WHERE tenant_id = %s AND message_ts = %s",
            (tenant, message_ts),
        )
        row = await cur.fetchone()
    assert row is not None, "the answer posted was not stored"
    return {"question": row[0], "service": row[1], "result": row[2]}  # type: ignore[index]


def card_json(call: SlackCall) -> str:
    return json.dumps({"text": call.body["text"], "blocks": call.body.get("blocks")})


async def test_mention_gets_one_threaded_answer_whose_quotes_verify(bot: Harness) -> None:
    event = mention(PAYMENTS_502)
    status, _ = await bot.sender.event(event)
    assert status == 200

    [post] = await bot.slack.wait_for("chat.postMessage")
    assert await bot.tasks.drain(10) == 0
    assert len(bot.slack.calls_to("chat.postMessage", ok=None)) == 1
    assert post.body["channel"] == CHANNEL
    assert post.body["thread_ts"] == event["ts"]
    assert post.body["unfurl_links"] is False and post.body["unfurl_media"] is False
    assert "link_names" not in post.body and "parse" not in post.body
    assert post.body["text"] and post.body["blocks"]
    # The working mark came and went.
    assert [c.body["name"] for c in bot.slack.calls_to("reactions.add")] == ["mag"]
    assert len(bot.slack.calls_to("reactions.remove")) == 1

    row = await stored_answer_row(bot.store, "acme", post.reply["ts"])
    result = row["result"]
    assert result["status"] == "answered" and result["citations"]
    async with bot.store.pool.connection() as conn:
        for citation in result["citations"]:
            cur = await conn.execute(
                "SELECT content FROM chunks WHERE tenant_id = 'acme' AND chunk_id = %s",
                (citation["evidence"]["chunk_id"],),
            )
            (content,) = await cur.fetchone()  # type: ignore[misc]
            assert citation["quote"] in content

