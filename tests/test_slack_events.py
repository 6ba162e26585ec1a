"""The real app over HTTP against a fake Slack: mentions, intake dedupe, signatures, tenancy,
delivery retries, health and metrics. Requests are signed exactly as Slack signs them."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

import aiohttp
import pytest_asyncio
from psycopg import sql
from pydantic import SecretStr
from slack_sdk.web.async_client import AsyncWebClient

from bot.core.dedupe import EventDeduper
from bot.core.metrics import BotMetrics
from bot.core.tasks import BackgroundTasks
from bot.server import HEALTH_TTL_S, build_internal_app, serving
from bot.slack.routes import EVENTS_PATH
from rag import FastEmbedder, IngestReport, RagMetrics, RagService, Settings, Store, add_workspace
from rag.answering.answerers import build_answerer
from tests import credentials
from tests.fakes.slack_api import (
    BOT_USER_ID,
    FakeSlack,
    SlackCall,
    SlackSender,
    api_error,
    connection_reset,
    rate_limited,
    server_error,
    stored_then,
)
from tests.slack_harness import served_app
from tests.test_slack_alerts import ALERTMANAGER

SECRET = credentials.SLACK_SIGNING_SECRET
CHANNEL = "C_INCIDENT"
PAYMENTS_502 = "payments are throwing 502s, what do I check first?"
# Kafka runbooks exist only for acme (corpus/README.md: topics only one tenant has).
KAFKA_LAG = (
    "fulfilment consumers are way behind on order-events, how do I see the lag per partition?"
)


@dataclass
class Harness:
    slack: FakeSlack
    sender: SlackSender
    url: str
    internal_url: str
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
        client = AsyncWebClient(token=credentials.SLACK_BOT_TOKEN, base_url=slack.base_url)
        async with served_app(
            settings=slack_settings, service=service, store=store, client=client
        ) as served:
            sender = SlackSender(served.events_url, SECRET)
            yield Harness(
                slack, sender, served.url, served.internal_url, served.tasks, served.metrics, store
            )


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
    return {"question": row[0], "service": row[1], "result": row[2]}


async def settle(bot: Harness, method: str = "chat.postMessage", count: int = 1) -> list[SlackCall]:
    """Wait for ``count`` successful calls, then for every listener to finish its bookkeeping."""
    calls = await bot.slack.wait_for(method, count)
    assert await bot.tasks.drain(10) == 0
    return calls


def card_json(call: SlackCall) -> str:
    return json.dumps({"text": call.body["text"], "blocks": call.body.get("blocks")})


async def test_mention_gets_one_threaded_answer_whose_quotes_verify(bot: Harness) -> None:
    event = mention(PAYMENTS_502)
    assert (await bot.sender.event(event)).status == 200

    [post] = await settle(bot)
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
                (citation["chunk_id"],),
            )
            chunk = await cur.fetchone()
            assert chunk is not None
            # Stored as a position in the chunk, which holds the verified quote.
            start, end = citation["quote"]
            assert 0 <= start < end <= len(chunk[0])
            shown = chunk[0][start:end].split()[0]
            assert any(shown in text for text in strings_in(post.body)), shown


async def test_bare_mention_in_an_alert_thread_asks_about_the_thread_root(bot: Harness) -> None:
    root_ts = "1700000000.000001"
    bot.slack.set_thread_root(CHANNEL, root_ts, ALERTMANAGER)
    await bot.sender.event(mention("", thread_ts=root_ts))

    [post] = await settle(bot)
    [replies] = bot.slack.calls_to("conversations.replies")
    assert replies.body["ts"] == root_ts and str(replies.body["limit"]) == "1"
    assert post.body["thread_ts"] == root_ts
    row = await stored_answer_row(bot.store, "acme", post.reply["ts"])
    assert "KafkaConsumerLagHigh" in row["question"]
    assert row["service"] == "kafka"  # the alert's service label, known to acme's runbooks


async def test_same_event_three_times_and_twice_concurrently_is_answered_once_each(
    bot: Harness,
) -> None:
    first, second = mention(PAYMENTS_502), mention(KAFKA_LAG)
    # The first copy already carries a retry header: it may be the only one that arrives.
    for retry_num in (1, 2, 3):
        reply = await bot.sender.event(first, event_id="Ev_DUP_1", retry_num=retry_num)
        assert reply.status == 200
    statuses = await asyncio.gather(*(bot.sender.event(second, event_id="Ev_DUP_2") for _ in "ab"))
    assert [reply.status for reply in statuses] == [200, 200]

    await settle(bot, count=2)
    threads = sorted(c.body["thread_ts"] for c in bot.slack.calls_to("chat.postMessage", ok=None))
    assert threads == sorted([first["ts"], second["ts"]])
    assert bot.metrics.registry.get_sample_value("runbook_slack_duplicates_dropped_total") == 3
    # Durable: another replica (or this one after a restart) drops them too.
    assert not await EventDeduper(bot.store).first_delivery("Ev_DUP_1")


async def test_bad_or_stale_signature_is_rejected_and_nothing_is_processed(bot: Harness) -> None:
    raw = bot.sender.envelope(mention(PAYMENTS_502))
    bad = await bot.sender.post(raw, "application/json", signature="v0=" + "0" * 64)
    stale = await bot.sender.post(raw, "application/json", timestamp=int(time.time()) - 301)
    assert (bad.status, stale.status) == (401, 401)

    assert await bot.tasks.drain(5) == 0
    assert bot.slack.calls == []
    assert (
        bot.metrics.registry.get_sample_value(
            "runbook_slack_events_received_total", {"kind": "app_mention"}
        )
        is None
    )


async def test_unknown_workspace_gets_the_not_connected_card_and_nothing_is_retrieved(
    bot: Harness,
) -> None:
    traces_before = await count_rows(bot.store, "retrieval_traces")
    await bot.sender.event(mention(PAYMENTS_502), team_id="T_STRANGER")

    [post] = await settle(bot)
    assert "not connected" in post.body["text"] and "T_STRANGER" in card_json(post)
    assert await count_rows(bot.store, "retrieval_traces") == traces_before
    assert len(bot.slack.calls_to("chat.postMessage", ok=None)) == 1


async def test_cross_tenant_question_gets_no_evidence_and_no_other_tenants_source(
    bot: Harness,
) -> None:
    await bot.sender.event(mention(KAFKA_LAG), team_id="T_GLOBEX")

    [post] = await settle(bot)
    assert post.body["text"].startswith("No runbook evidence")
    row = await stored_answer_row(bot.store, "globex", post.reply["ts"])
    assert row["result"]["status"] == "abstained"
    async with bot.store.pool.connection() as conn:
        cur = await conn.execute(
            "SELECT title FROM documents WHERE tenant_id = 'acme' "
            "AND title NOT IN (SELECT title FROM documents WHERE tenant_id = 'globex')"
        )
        acme_only = [title for (title,) in await cur.fetchall()]
        evidence = [e["chunk_id"] for e in row["result"]["evidence"]]
        cur = await conn.execute(
            "SELECT count(*) FROM chunks WHERE tenant_id = 'globex' AND chunk_id = ANY(%s)",
            (evidence,),
        )
        globex_chunks = await cur.fetchone()
    assert acme_only and not [title for title in acme_only if title in card_json(post)]
    assert globex_chunks is not None and globex_chunks[0] == len(evidence)  # all globex's own


async def test_rate_limited_post_is_retried_after_retry_after_and_delivered_once(
    bot: Harness,
) -> None:
    bot.slack.fail("chat.postMessage", rate_limited(retry_after=1))
    await bot.sender.event(mention(PAYMENTS_502))

    await settle(bot)
    limited, delivered = bot.slack.calls_to("chat.postMessage", ok=None)
    assert (limited.status, delivered.status) == (429, 200)
    assert delivered.at - limited.at >= 1.0
    assert limited.body["blocks"] == delivered.body["blocks"]


async def test_a_post_lost_to_a_5xx_or_reset_is_looked_for_in_the_thread_then_posted_again(
    bot: Harness,
) -> None:
    bot.slack.fail("chat.postMessage", server_error(500))
    first = mention(PAYMENTS_502)
    await bot.sender.event(first)
    await settle(bot)
    bot.slack.fail("chat.postMessage", connection_reset())
    second = mention(KAFKA_LAG)
    await bot.sender.event(second)
    await settle(bot, count=2)
    # Never re-posted blindly: each failure is followed by a look for the job's message.
    sequence = [
        (c.method, c.status)
        for c in bot.slack.calls
        if c.method in ("chat.postMessage", "conversations.replies")
    ]
    assert sequence == [
        ("chat.postMessage", 500),
        ("conversations.replies", 200),
        ("chat.postMessage", 200),
        ("chat.postMessage", 0),
        ("conversations.replies", 200),
        ("chat.postMessage", 200),
    ]
    for event in (first, second):
        [answer] = bot.slack.thread_posts(CHANNEL, event["ts"])
        assert answer["metadata"]["event_type"] == "runbook_answer"


def reading_thread(thread_ts: str) -> Callable[[SlackCall], bool]:
    return lambda call: bool(call.body.get("ts") == thread_ts)


async def test_a_post_slack_stored_despite_a_5xx_or_reset_is_found_and_not_posted_twice(
    bot: Harness,
) -> None:
    for failure, question in ((server_error(503), PAYMENTS_502), (connection_reset(), KAFKA_LAG)):
        bot.slack.fail("chat.postMessage", stored_then(failure))
        event = mention(question)
        await bot.sender.event(event)
        await bot.slack.wait_for("conversations.replies", where=reading_thread(event["ts"]))
        assert await bot.tasks.drain(10) == 0

        [kept] = bot.slack.thread_posts(CHANNEL, event["ts"])
        payload = kept["metadata"]["event_payload"]
        assert set(payload) == {"job_id", "answer_id"}
        row = await stored_answer_row(bot.store, "acme", kept["ts"])
        assert row["question"] == question  # the answer was recorded against the kept message
    assert len(bot.slack.calls_to("chat.postMessage", ok=None)) == 2
    assert bot.slack.calls_to("chat.postMessage") == []  # the only posts were the failed ones


async def test_a_post_that_keeps_failing_ends_in_the_error_card(bot: Harness) -> None:
    bot.slack.fail("chat.postMessage", api_error("invalid_blocks"))
    await bot.sender.event(mention(PAYMENTS_502))

    [post] = await settle(bot)
    assert "went wrong" in post.body["text"]
    assert (
        post.body["thread_ts"]
        == bot.slack.calls_to("chat.postMessage", ok=False)[0].body["thread_ts"]
    )
    assert (
        bot.metrics.registry.get_sample_value(
            "runbook_slack_post_failures_total",
            {"method": "chat.postMessage", "error": "invalid_blocks"},
        )
        == 1
    )


async def test_healthz_checks_the_database_and_metrics_expose_the_counters(bot: Harness) -> None:
    await bot.sender.event(mention(PAYMENTS_502))
    await settle(bot)

    async with aiohttp.ClientSession() as session:
        async with session.get(bot.internal_url + "/healthz") as resp:
            assert resp.status == 200 and (await resp.json()) == {"status": "ok"}
        async with session.get(bot.internal_url + "/metrics") as resp:
            assert resp.status == 200
            text = await resp.text()
        for path in ("/healthz", "/metrics"):  # never on the public Slack listener
            async with session.get(bot.url + path) as resp:
                assert resp.status == 404
    assert 'runbook_slack_events_received_total{kind="app_mention"} 1.0' in text
    assert 'runbook_slack_answers_posted_total{entry="mention",status="answered"} 1.0' in text
    assert "runbook_slack_duplicates_dropped_total 0.0" in text
    assert "runbook_slack_post_failures_total" in text
    assert "runbook_ask_seconds_count" in text  # the core's metrics on the same page
    # The work queue's: depth, age of the oldest job, re-runs and dead jobs.
    assert 'runbook_jobs_runs_total{kind="slack.mention",outcome="done"} 1.0' in text
    assert 'runbook_jobs_depth{state="queued"}' in text
    for name in ("jobs_oldest_age_seconds", "jobs_retried_total", "jobs_dead", "jobs_held_claims"):
        assert f"runbook_{name} " in text


async def count_rows(store: Store, table: str) -> int:
    async with store.pool.connection() as conn:
        cur = await conn.execute(sql.SQL("SELECT count(*) FROM {}").format(sql.Identifier(table)))
        row = await cur.fetchone()
    assert row is not None
    return int(row[0])


async def test_healthz_is_503_while_the_database_is_unreachable_after_its_cached_second(
    settings: Settings,
) -> None:
    store = await Store.open(settings)
    internal = build_internal_app(store=store, rag_metrics=RagMetrics(), bot_metrics=BotMetrics())
    async with (
        serving(internal, host="127.0.0.1", port=0) as port,
        aiohttp.ClientSession() as http,
    ):
        url = f"http://127.0.0.1:{port}/healthz"
        async with http.get(url) as resp:
            assert resp.status == 200
        await store.close()
        async with http.get(url) as resp:
            assert resp.status == 200  # the last check's result, reused within its second
        await asyncio.sleep(HEALTH_TTL_S + 0.1)
        async with http.get(url) as resp:
            assert resp.status == 503
            assert (await resp.json())["status"] == "unavailable"
        async with http.post(f"http://127.0.0.1:{port}{EVENTS_PATH}", data="{}") as resp:
            assert resp.status in (404, 405)  # no Slack endpoint on the internal port


def strings_in(value: object) -> list[str]:
    """Every string inside a request body (blocks are nested dicts and lists)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for item in value.values() for s in strings_in(item)]
    if isinstance(value, list):
        return [s for item in value for s in strings_in(item)]
    return []
