"""Slack jobs end to end (real app, real queue, fake Slack): a re-run finds its own card, a late
answer ends in the "ask again" card, an expired response_url falls back to a DM, and a claim
the database cannot take in time is acked and answered once, later."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

import anthropic
from pydantic import SecretStr
from slack_sdk.web.async_client import AsyncWebClient

from bot.slack.delivery.posts import ANSWER_EVENT
from rag import Answerer, FastEmbedder, IngestReport, RagService, Settings, Store, add_workspace
from rag.answering.answerers import ClaudeAnswerer, ExtractiveAnswerer
from tests import credentials
from tests.fakes.anthropic_api import FakeAnthropic, delay, tool_answer
from tests.fakes.slack_api import (
    BOT_USER_ID,
    Failure,
    FakeSlack,
    SlackSender,
    connection_reset,
    server_error,
    stored_then,
)
from tests.slack_harness import ServedApp, served_app

SECRET = credentials.SLACK_SIGNING_SECRET
CHANNEL = "C_JOBS"
PAYMENTS_502 = "payments are throwing 502s, what do I check first?"


@dataclass
class Bot:
    slack: FakeSlack
    sender: SlackSender
    served: ServedApp
    store: Store

    async def mention(self, text: str) -> dict[str, str]:
        ts = f"{time.time():.6f}"
        event = {"type": "app_mention", "user": "U_ALICE", "channel": CHANNEL, "ts": ts}
        event["text"] = f"<@{BOT_USER_ID}> {text}"
        reply = await self.sender.event(event)
        assert reply.status == 200 and reply.seconds < 3.0
        return event


@asynccontextmanager
async def running(
    settings: Settings, store: Store, embedder: FastEmbedder, answerer: Answerer, **tuning: float
) -> AsyncIterator[Bot]:
    await add_workspace(store, "T_ACME", "acme")
    own = settings.model_copy(
        update={"slack_signing_secret": SecretStr(SECRET), "job_poll_s": 0.05, **tuning}
    )
    service = RagService(store=store, embedder=embedder, answerer=answerer, settings=own)
    async with FakeSlack() as slack:
        client = AsyncWebClient(token=credentials.SLACK_BOT_TOKEN, base_url=slack.base_url)
        async with served_app(settings=own, service=service, store=store, client=client) as app:
            yield Bot(slack, SlackSender(app.events_url, SECRET), app, store)


async def job_state(store: Store, event_id_like: str) -> list[tuple[str, int]]:
    async with store.pool.connection() as conn:
        cur = await conn.execute(
            "SELECT state, attempts FROM jobs WHERE dedupe_key LIKE %s", (event_id_like,)
        )
        return [(row[0], row[1]) for row in await cur.fetchall()]


async def test_a_job_rerun_after_its_post_went_unconfirmed_finds_the_card_and_posts_nothing(
    settings: Settings, store: Store, embedder: FastEmbedder, demo_corpus: IngestReport
) -> None:
    async with running(settings, store, embedder, ExtractiveAnswerer()) as bot:
        # Slack keeps the post but the connection drops, and the thread cannot be read either
        # (twice: the client retries a 500 once): the outcome stays unknown, the job fails.
        bot.slack.fail("chat.postMessage", stored_then(connection_reset()))
        bot.slack.fail("conversations.replies", server_error(500), times=2)
        event = await bot.mention(PAYMENTS_502)
        [looked] = await bot.slack.wait_for("conversations.replies", within_s=15)
        assert await bot.served.tasks.drain(10) == 0
    # The re-run looked first, found its card by the job id in its metadata, posted nothing.
    assert looked.body["ts"] == event["ts"] and looked.body["include_all_metadata"]
    [kept] = bot.slack.thread_posts(CHANNEL, event["ts"])
    assert kept["metadata"]["event_type"] == ANSWER_EVENT
    assert len(bot.slack.calls_to("chat.postMessage", ok=None)) == 1
    job_id = kept["metadata"]["event_payload"]["job_id"]
    async with store.pool.connection() as conn:
        cur = await conn.execute(
            "SELECT state, attempts FROM jobs WHERE job_id = %s", (uuid.UUID(job_id),)
        )
        assert await cur.fetchone() == ("done", 2)


async def test_an_answer_past_the_deadline_ends_in_the_ask_again_card_and_clears_the_mark(
    settings: Settings, store: Store, embedder: FastEmbedder, demo_corpus: IngestReport
) -> None:
    slow = delay(10.0, tool_answer("not_in_sources", "The excerpts do not say."))
    async with FakeAnthropic(default=slow) as fake:
        client = anthropic.AsyncAnthropic(
            api_key="sk-test", base_url=fake.base_url, max_retries=0, timeout=30
        )
        answerer = ClaudeAnswerer(client=client, model="claude-test")
        try:
            async with running(settings, store, embedder, answerer, job_deadline_s=1.5) as bot:
                event = await bot.mention(PAYMENTS_502)
                [card] = await bot.slack.wait_for("chat.postMessage", within_s=10)
                assert await bot.served.tasks.drain(10) == 0
        finally:
            await answerer.aclose()
    assert card.body["thread_ts"] == event["ts"]
    assert "could not answer this question in time" in card.body["text"]
    assert "Ask again" in card.body["text"]
    added, removed = bot.slack.calls_to("reactions.add"), bot.slack.calls_to("reactions.remove")
    assert len(added) == 1 and len(removed) >= 1
    assert {c.body["timestamp"] for c in removed} == {event["ts"]}


async def test_an_expired_response_url_falls_back_to_a_direct_message(
    settings: Settings, store: Store, embedder: FastEmbedder, demo_corpus: IngestReport
) -> None:
    async with running(settings, store, embedder, ExtractiveAnswerer()) as bot:
        bot.slack.fail("response_url", Failure(404, "expired_url"))
        fields = {
            "command": "/runbook",
            "text": PAYMENTS_502,
            "team_id": "T_ACME",
            "channel_id": CHANNEL,
            "user_id": "U_ALICE",
            "api_app_id": "A_RUNBOOK",
            "response_url": bot.slack.response_url("expired"),
            "trigger_id": f"trigger-{uuid.uuid4().hex[:8]}",
        }
        assert (await bot.sender.command(fields)).status == 200
        [dm] = await bot.slack.wait_for("chat.postMessage")
        assert await bot.served.tasks.drain(10) == 0
    assert dm.body["channel"] == "U_ALICE" and "thread_ts" not in dm.body
    assert dm.body["metadata"]["event_type"] == ANSWER_EVENT
    assert "gateway" in dm.body["text"].lower()
    assert bot.slack.calls_to("response_url") == []  # the one try was refused


async def test_a_mention_whose_claim_times_out_is_acked_then_answered_exactly_once(
    settings: Settings, store: Store, embedder: FastEmbedder, demo_corpus: IngestReport
) -> None:
    narrow = {"intake_pool_size": 1, "intake_timeout_s": 0.3}
    async with running(settings, store, embedder, ExtractiveAnswerer(), **narrow) as bot:
        event_id = f"EvHELD{uuid.uuid4().hex[:8]}"
        ts = f"{time.time():.6f}"
        event = {"type": "app_mention", "user": "U_ALICE", "channel": CHANNEL, "ts": ts}
        event["text"] = f"<@{BOT_USER_ID}> {PAYMENTS_502}"
        async with bot.served.jobs.intake_pool.connection():  # the intake pool is stuck
            reply = await bot.sender.event(event, event_id=event_id)
            assert reply.status == 200 and reply.seconds < 3.0  # acked all the same
            assert bot.served.jobs.held == 1
            await asyncio.sleep(0.5)
            assert bot.slack.calls_to("chat.postMessage", ok=None) == []  # not let through
        # Slack does not redeliver an acked event; the held claim is written on the next
        # maintenance tick, and the job answers once.
        [post] = await bot.slack.wait_for("chat.postMessage", within_s=15)
        assert await bot.served.tasks.drain(10) == 0
        again = await bot.sender.event(event, event_id=event_id, retry_num=1)
        assert again.status == 200
        await asyncio.sleep(0.5)
        assert await bot.served.tasks.drain(10) == 0
    assert post.body["thread_ts"] == ts
    assert len(bot.slack.calls_to("chat.postMessage", ok=None)) == 1
    assert await job_state(store, event_id) == [("done", 1)]
