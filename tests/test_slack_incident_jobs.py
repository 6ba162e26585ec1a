"""The incident channel's entries as durable jobs (real app, real queue, fake Slack): an alert
post, a follow-up and a DM are job rows by the time they are acked (chatter is not); a re-run
finds the card an earlier run posted, in a thread or top-level in a DM, and posts nothing more;
a job that gives up is silent on an alert and says so in a DM."""

from __future__ import annotations

import json
import uuid

import anthropic

from bot.core.alerts.channel_settings import set_channel_switch
from bot.core.dm_intros import first_direct_message
from rag import FastEmbedder, IngestReport, Settings, Store
from rag.answering.answerers import ClaudeAnswerer, ExtractiveAnswerer
from tests.fakes.anthropic_api import FakeAnthropic, delay, tool_answer
from tests.fakes.slack_api import (
    BOT_USER_ID,
    connection_reset,
    server_error,
    stored_then,
)
from tests.test_slack_alerts import ALERTMANAGER
from tests.test_slack_incident_channel import (
    FAILOVER,
    REPLICA,
    alert_post,
    mentioned,
    new_channel,
    said,
)
from tests.test_slack_jobs import running


async def opt_in(store: Store) -> str:
    channel = new_channel()
    await set_channel_switch(store, "acme", "T_ACME", channel, "alerts", True)
    return channel


def new_dm() -> tuple[str, str]:
    """A DM channel and the person in it."""
    return f"D_{uuid.uuid4().hex[:8].upper()}", f"U_{uuid.uuid4().hex[:8].upper()}"


def new_event_id() -> str:
    return f"Ev{uuid.uuid4().hex[:12]}"


async def jobs_of(store: Store, event_ids: list[str]) -> dict[str, tuple[str, str, int]]:
    """event id → (kind, state, attempts) of the jobs queued for those deliveries."""
    async with store.pool.connection() as conn:
        cur = await conn.execute(
            "SELECT dedupe_key, kind, state, attempts FROM jobs WHERE dedupe_key = ANY(%s)",
            (event_ids,),
        )
        return {row[0]: (row[1], row[2], row[3]) for row in await cur.fetchall()}


async def test_alert_posts_follow_ups_and_dms_are_job_rows_by_the_time_they_are_acked(
    settings: Settings, store: Store, embedder: FastEmbedder, demo_corpus: IngestReport
) -> None:
    async with running(settings, store, embedder, ExtractiveAnswerer()) as bot:
        channel = await opt_in(store)
        await set_channel_switch(store, "acme", "T_ACME", channel, "follow_ups", True)
        question = mentioned(channel, FAILOVER)
        await bot.sender.event(question)
        await bot.slack.wait_for("chat.postMessage")  # a thread the bot answered
        dm, person = new_dm()
        work = {
            "slack.alert_post": alert_post(channel),
            "slack.follow_up": said(channel, REPLICA, thread_ts=question["ts"]),
            "slack.direct_message": said(dm, FAILOVER, channel_type="im", user=person),
        }
        for kind, event in work.items():
            event_id = new_event_id()
            reply = await bot.sender.event(event, event_id=event_id)
            assert reply.status == 200 and reply.seconds < 3.0
            # Written with the dedupe claim, before the ack: the row is there as the 200 is.
            [(queued_kind, _, _)] = (await jobs_of(store, [event_id])).values()
            assert queued_kind == kind
        resolved = json.loads(json.dumps(ALERTMANAGER).replace("[FIRING:1]", "[RESOLVED]"))
        not_work = [
            said(channel, "lunch anyone?"),
            said(channel, "thanks!", thread_ts=question["ts"]),
            alert_post(channel, resolved),
            alert_post(channel, user=BOT_USER_ID),  # the bot's own post
            # A mention's message copy: its app_mention twin is the job.
            said(channel, f"<@{BOT_USER_ID}> {FAILOVER}"),
        ]
        skipped = [new_event_id() for _ in not_work]
        for event, event_id in zip(not_work, skipped, strict=True):
            assert (await bot.sender.event(event, event_id=event_id)).status == 200
        assert await jobs_of(store, skipped) == {}
        # Mention, alert card, follow-up, and the DM's intro and answer.
        await bot.slack.wait_for("chat.postMessage", 5)
        assert await bot.served.tasks.drain(15) == 0
    assert len(bot.slack.calls_to("chat.postMessage", ok=None)) == 5


async def test_a_rerun_of_an_alert_post_job_finds_its_card_in_the_thread_and_posts_nothing_more(
    settings: Settings, store: Store, embedder: FastEmbedder, demo_corpus: IngestReport
) -> None:
    async with running(settings, store, embedder, ExtractiveAnswerer()) as bot:
        channel = await opt_in(store)
        # Slack keeps the card but the connection drops, and the thread cannot be read either
        # (twice: the client retries a 500 once): the outcome stays unknown, the job runs again.
        bot.slack.fail("chat.postMessage", stored_then(connection_reset()))
        bot.slack.fail("conversations.replies", server_error(500), times=2)
        post, event_id = alert_post(channel), new_event_id()
        assert (await bot.sender.event(post, event_id=event_id)).status == 200
        [looked] = await bot.slack.wait_for("conversations.replies", within_s=15)
        assert await bot.served.tasks.drain(10) == 0
    assert looked.body["ts"] == post["ts"] and looked.body["include_all_metadata"]
    [card] = bot.slack.thread_posts(channel, post["ts"])
    assert "Posted automatically" in json.dumps(card["blocks"])
    assert len(bot.slack.calls_to("chat.postMessage", ok=None)) == 1
    assert await jobs_of(store, [event_id]) == {event_id: ("slack.alert_post", "done", 2)}
    # The re-run knew the alert's claim as its own (not a repeat) and finished the job: the
    # delivery is recorded, and the card's "Mute this alert here" refers to this alert.
    answer_id = card["metadata"]["event_payload"]["answer_id"]
    async with store.pool.connection() as conn:
        cur = await conn.execute(
            "SELECT message_ts FROM answers WHERE tenant_id = 'acme' AND answer_id = %s",
            (uuid.UUID(answer_id),),
        )
        assert await cur.fetchone() == (card["ts"],)
        cur = await conn.execute(
            "SELECT answer_id FROM alert_fingerprints WHERE channel_id = %s", (channel,)
        )
        assert await cur.fetchone() == (uuid.UUID(answer_id),)


async def test_a_rerun_of_a_dm_job_finds_its_top_level_answer_and_posts_nothing_more(
    settings: Settings, store: Store, embedder: FastEmbedder, demo_corpus: IngestReport
) -> None:
    dm, person = new_dm()
    assert await first_direct_message(store, "T_ACME", person)  # had the intro already
    async with running(settings, store, embedder, ExtractiveAnswerer()) as bot:
        bot.slack.fail("chat.postMessage", stored_then(connection_reset()))
        bot.slack.fail("conversations.history", server_error(500), times=2)
        event = said(dm, FAILOVER, channel_type="im", user=person)
        assert (await bot.sender.event(event)).status == 200
        [looked] = await bot.slack.wait_for("conversations.history", within_s=15)
        assert await bot.served.tasks.drain(10) == 0
    # A DM's answer is top-level: the re-run looked in the DM's history, from the question on.
    assert looked.body["channel"] == dm and looked.body["oldest"] == event["ts"]
    assert looked.body["include_all_metadata"]
    [answer] = bot.slack.messages[dm]
    assert "thread_ts" not in answer and answer["metadata"]["event_type"] == "runbook_answer"
    assert len(bot.slack.calls_to("chat.postMessage", ok=None)) == 1


async def test_a_late_alert_answer_gives_up_silently_and_a_late_dm_says_ask_again(
    settings: Settings, store: Store, embedder: FastEmbedder, demo_corpus: IngestReport
) -> None:
    slow = delay(10.0, tool_answer("not_in_sources", "The excerpts do not say."))
    dm, person = new_dm()
    assert await first_direct_message(store, "T_ACME", person)
    async with FakeAnthropic(default=slow) as fake:
        client = anthropic.AsyncAnthropic(
            api_key="sk-test", base_url=fake.base_url, max_retries=0, timeout=30
        )
        answerer = ClaudeAnswerer(client=client, model="claude-test")
        try:
            async with running(settings, store, embedder, answerer, job_deadline_s=1.5) as bot:
                channel = await opt_in(store)
                alert_id, dm_id = new_event_id(), new_event_id()
                await bot.sender.event(alert_post(channel), event_id=alert_id)
                await bot.sender.event(
                    said(dm, FAILOVER, channel_type="im", user=person), event_id=dm_id
                )
                [card] = await bot.slack.wait_for("chat.postMessage", within_s=10)
                assert await bot.served.tasks.drain(10) == 0
        finally:
            await answerer.aclose()
    assert card.body["channel"] == dm
    assert "could not answer this question in time" in card.body["text"]
    # Nobody asked about the alert: no card for it, although its job gave up too.
    assert len(bot.slack.calls_to("chat.postMessage", ok=None)) == 1
    assert await jobs_of(store, [alert_id, dm_id]) == {
        alert_id: ("slack.alert_post", "dead", 1),
        dm_id: ("slack.direct_message", "dead", 1),
    }
