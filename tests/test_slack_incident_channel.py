"""The incident channel end to end, over HTTP against a fake Slack: alert posts answered
unprompted (opt-in, once, quietly), thread follow-ups, one answer per message, visible progress
and DMs. Requests are signed exactly as Slack signs them; events are shaped as Slack sends them."""

from __future__ import annotations

import asyncio
import itertools
import json
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import pytest_asyncio
from psycopg import sql
from pydantic import SecretStr
from slack_sdk.web.async_client import AsyncWebClient

from bot.core.alerts.channel_settings import set_channel_switch
from bot.core.tasks import BackgroundTasks
from rag import FastEmbedder, IngestReport, RagService, Settings, Store, add_workspace
from rag.answering.answerers import build_answerer
from tests import credentials
from tests.fakes.slack_api import BOT_ID, BOT_USER_ID, FakeSlack, SlackCall, SlackSender, api_error
from tests.slack_harness import served_app
from tests.test_slack_alerts import ALERTMANAGER

SECRET = credentials.SLACK_SIGNING_SECRET
PERSON = "U_ONCALL"
FAILOVER = "how do I fail over the payments database?"
REPLICA = "what about the replica, how do I check it?"
FLUX = {
    "text": "",
    "attachments": [
        {
            "color": "danger",
            "title": "[FIRING:1] FluxCapacitorOverheating (delorean-01)",
            "text": "*Alert:* flux capacitor core temperature above threshold for 5 minutes\n"
            " • *alertname:* `FluxCapacitorOverheating`\n • *instance:* `delorean-01`",
        }
    ],
}
_TS = itertools.count(1)


@dataclass
class Harness:
    slack: FakeSlack
    sender: SlackSender
    tasks: BackgroundTasks
    store: Store

    def posts(self, channel: str) -> list[SlackCall]:
        return [c for c in self.slack.calls_to("chat.postMessage") if c.body["channel"] == channel]

    async def quiet(self, channel: str) -> list[SlackCall]:
        """Every answer task finished: what was posted in the channel."""
        await asyncio.sleep(0.2)
        assert await self.tasks.drain(15) == 0
        return self.posts(channel)

    async def answered(self, channel: str, count: int = 1) -> list[SlackCall]:
        await self.slack.wait_for(
            "chat.postMessage", count, where=lambda c: c.body["channel"] == channel
        )
        return await self.quiet(channel)


@pytest_asyncio.fixture(loop_scope="session")
async def bot(
    settings: Settings, store: Store, embedder: FastEmbedder, demo_corpus: IngestReport
) -> AsyncIterator[Harness]:
    await add_workspace(store, "T_ACME", "acme")
    slack_settings = settings.model_copy(update={"slack_signing_secret": SecretStr(SECRET)})
    service = RagService(
        store=store, embedder=embedder, answerer=build_answerer(settings), settings=slack_settings
    )
    async with FakeSlack() as slack:
        client = AsyncWebClient(token=credentials.SLACK_BOT_TOKEN, base_url=slack.base_url)
        async with served_app(
            settings=slack_settings, service=service, store=store, client=client
        ) as served:
            yield Harness(slack, SlackSender(served.events_url, SECRET), served.tasks, store)


def new_ts() -> str:
    return f"{int(time.time())}.{next(_TS):06d}"


def new_channel() -> str:
    return f"C_{uuid.uuid4().hex[:10].upper()}"


def alert_post(channel: str, alert: dict[str, Any] = ALERTMANAGER, **extra: Any) -> dict[str, Any]:
    """An integration's post (Alertmanager's Slack receiver), as a ``message`` event."""
    ts = new_ts()
    return {
        "type": "message",
        "subtype": "bot_message",
        "bot_id": "B_AM",
        "username": "alertmanager",
        "ts": ts,
        "event_ts": ts,
        "channel": channel,
        "channel_type": "channel",
        **alert,
        **extra,
    }


def said(channel: str, text: str, *, thread_ts: str | None = None, **extra: Any) -> dict[str, Any]:
    """A person's message, as a ``message`` event."""
    ts = new_ts()
    thread = {"thread_ts": thread_ts, "parent_user_id": PERSON} if thread_ts else {}
    return {
        "type": "message",
        "user": PERSON,
        "text": text,
        "ts": ts,
        "event_ts": ts,
        "channel": channel,
        "channel_type": "channel",
        **thread,
        **extra,
    }


def mentioned(channel: str, question: str, **extra: Any) -> dict[str, Any]:
    ts = new_ts()
    return {
        "type": "app_mention",
        "user": PERSON,
        "text": f"<@{BOT_USER_ID}> {question}",
        "ts": ts,
        "event_ts": ts,
        "channel": channel,
        **extra,
    }


async def opted_in(bot: Harness) -> str:
    channel = new_channel()
    await set_channel_switch(bot.store, "acme", "T_ACME", channel, "alerts", True)
    return channel


async def following(bot: Harness) -> str:
    """A channel that switched follow-ups on (they are off by default)."""
    channel = new_channel()
    await set_channel_switch(bot.store, "acme", "T_ACME", channel, "follow_ups", True)
    return channel


def buttons(call: SlackCall) -> dict[str, str]:
    """action_id → label of every button on a posted card."""
    return {
        element["action_id"]: element["text"]["text"]
        for block in call.body["blocks"]
        if block["type"] == "actions"
        for element in block["elements"]
        if element["type"] == "button"
    }


async def click(bot: Harness, call: SlackCall, action_id: str) -> None:
    channel = call.body["channel"]
    payload = {
        "type": "block_actions",
        "team": {"id": "T_ACME"},
        "user": {"id": PERSON, "team_id": "T_ACME"},
        "channel": {"id": channel},
        "container": {"type": "message", "channel_id": channel, "message_ts": call.reply["ts"]},
        "response_url": bot.slack.response_url(),
        "trigger_id": "1.2",
        "actions": [
            {"action_id": action_id, "value": buttons_value(call, action_id), "type": "button"}
        ],
    }
    assert (await bot.sender.interaction(payload)).status == 200
    await bot.slack.wait_for("response_url")
    assert await bot.tasks.drain(10) == 0


def buttons_value(call: SlackCall, action_id: str) -> str:
    for block in call.body["blocks"]:
        for element in block.get("elements") or []:
            if element.get("action_id") == action_id:
                return str(element["value"])
    raise AssertionError(f"no {action_id} button")


async def test_alert_post_in_an_opted_in_channel_gets_one_automatic_card_in_its_thread(
    bot: Harness,
) -> None:
    channel = await opted_in(bot)
    post = alert_post(channel)
    assert (await bot.sender.event(post)).status == 200

    [card] = await bot.answered(channel)
    assert card.body["thread_ts"] == post["ts"]
    assert "Posted automatically" in json.dumps(card.body["blocks"])
    assert buttons(card)["mute_alert"] == "Mute this alert here"
    # Nobody asked: no loading status, no reaction on someone else's post.
    assert not bot.slack.calls_to("assistant.threads.setStatus")
    assert not bot.slack.calls_to("reactions.add")


async def test_alert_posts_that_must_stay_silent_post_nothing(bot: Harness) -> None:
    channel = await opted_in(bot)
    first = alert_post(channel)
    await bot.sender.event(first)
    assert len(await bot.answered(channel)) == 1
    resolved = json.loads(json.dumps(ALERTMANAGER).replace("[FIRING:1]", "[RESOLVED]"))
    silent = [
        alert_post(new_channel()),  # a channel that never opted in
        alert_post(channel),  # the same alert again, within the repeat window
        alert_post(channel, resolved),
        said(channel, "lunch anyone?"),
        alert_post(channel, FLUX),  # no runbook covers it: the abstention is not posted
        # The bot's own post, carrying an alert (Bolt and the router both drop it).
        alert_post(channel, json.loads(json.dumps(FLUX).replace("Flux", "Other")), bot_id=BOT_ID),
    ]
    for event in silent:
        assert (await bot.sender.event(event)).status == 200
    await bot.quiet(channel)
    assert len(bot.slack.calls_to("chat.postMessage", ok=None)) == 1
    assert not bot.slack.calls_to("chat.postEphemeral", ok=None)


async def test_muted_alert_is_not_answered_again_in_that_channel(bot: Harness) -> None:
    channel = await opted_in(bot)
    await bot.sender.event(alert_post(channel))
    [card] = await bot.answered(channel)

    await click(bot, card, "mute_alert")
    [confirmation] = bot.slack.calls_to("response_url")
    assert "Muted" in confirmation.body["text"]
    assert "KafkaConsumerLagHigh" in confirmation.body["text"]
    # Another instance of the same alert (other labels, so not a repeat): muted all the same.
    other = json.loads(json.dumps(ALERTMANAGER).replace("`kafka`", "`kafka-eu`"))
    await bot.sender.event(alert_post(channel, other))
    assert len(await bot.quiet(channel)) == 1


async def test_follow_up_question_in_a_bot_answered_thread_gets_one_answer(bot: Harness) -> None:
    channel = await following(bot)
    question = mentioned(channel, FAILOVER)
    await bot.sender.event(question)
    await bot.answered(channel)

    await bot.sender.event(said(channel, REPLICA, thread_ts=question["ts"]))
    first, follow_up = await bot.answered(channel, 2)
    assert follow_up.body["thread_ts"] == question["ts"]
    assert buttons(follow_up)["stop_following"] == "Stop following this thread"
    # Retrieved with the thread's question as context ("the replica" of what?).
    async with bot.store.pool.connection() as conn:
        cur = await conn.execute(
            "SELECT question FROM answers WHERE tenant_id = 'acme' AND message_ts = %s",
            (follow_up.reply["ts"],),
        )
        row = await cur.fetchone()
    assert row is not None and REPLICA in row[0] and FAILOVER in row[0]


async def test_thread_replies_that_are_not_questions_to_the_bot_get_nothing(
    bot: Harness,
) -> None:
    channel = await following(bot)
    question = mentioned(channel, FAILOVER)
    await bot.sender.event(question)
    await bot.answered(channel)
    top = said(channel, "heads-up: starting the payments-db maintenance now")
    for event in (
        said(channel, "thanks!", thread_ts=question["ts"]),
        said(channel, ":+1: :pray:", thread_ts=question["ts"]),
        said(channel, "<@U_OTHER> can you take this?", thread_ts=question["ts"]),
        top,
        said(channel, REPLICA, thread_ts=top["ts"]),  # a thread the bot never answered
    ):
        assert (await bot.sender.event(event)).status == 200
    assert len(await bot.quiet(channel)) == 1


async def test_stop_following_and_the_channel_switch_end_follow_ups(bot: Harness) -> None:
    channel = await following(bot)
    question = mentioned(channel, FAILOVER)
    await bot.sender.event(question)
    await bot.answered(channel)
    await bot.sender.event(said(channel, REPLICA, thread_ts=question["ts"]))
    _, follow_up = await bot.answered(channel, 2)

    await click(bot, follow_up, "stop_following")
    await bot.sender.event(said(channel, REPLICA, thread_ts=question["ts"]))
    assert len(await bot.quiet(channel)) == 2

    other = mentioned(channel, FAILOVER)
    await bot.sender.event(other)
    await bot.answered(channel, 3)
    await set_channel_switch(bot.store, "acme", "T_ACME", channel, "follow_ups", False)
    await bot.sender.event(said(channel, REPLICA, thread_ts=other["ts"]))
    assert len(await bot.quiet(channel)) == 3


async def test_follow_ups_stay_unanswered_until_the_channel_switches_them_on(
    bot: Harness,
) -> None:
    channel = new_channel()
    question = mentioned(channel, FAILOVER)
    await bot.sender.event(question)
    await bot.answered(channel)
    await bot.sender.event(said(channel, REPLICA, thread_ts=question["ts"]))
    assert len(await bot.quiet(channel)) == 1  # off by default, private channels included

    await set_channel_switch(bot.store, "acme", "T_ACME", channel, "follow_ups", True)
    await bot.sender.event(said(channel, REPLICA, thread_ts=question["ts"]))
    await bot.answered(channel, 2)


async def test_a_follow_up_the_bot_stays_silent_on_leaves_nothing_stored(bot: Harness) -> None:
    channel = await following(bot)
    question = mentioned(channel, FAILOVER)
    await bot.sender.event(question)
    await bot.answered(channel)
    before = await kept_rows(bot.store)
    # A question the runbooks do not answer: the bot abstains, so it says nothing.
    unanswerable = "what about the flux capacitor on delorean-01, why is it overheating?"
    await bot.sender.event(said(channel, unanswerable, thread_ts=question["ts"]))
    assert len(await bot.quiet(channel)) == 1
    assert await kept_rows(bot.store) == before


async def kept_rows(store: Store) -> dict[str, int]:
    """acme's stored answers, answer facts and retrieval traces."""
    counts = {}
    async with store.pool.connection() as conn:
        for table in ("answers", "answer_facts", "retrieval_traces"):
            cur = await conn.execute(
                sql.SQL("SELECT count(*) FROM {} WHERE tenant_id = 'acme'").format(
                    sql.Identifier(table)
                )
            )
            row = await cur.fetchone()
            counts[table] = int(row[0]) if row else 0
    return counts


async def test_mention_delivered_as_app_mention_and_as_message_is_answered_once(
    bot: Harness,
) -> None:
    channel = new_channel()
    for message_first in (False, True):
        mention = mentioned(channel, FAILOVER)
        message = {**mention, "type": "message", "channel_type": "channel"}
        pair = [message, mention] if message_first else [mention, message]
        replies = await asyncio.gather(*(bot.sender.event(event) for event in pair))
        assert [reply.status for reply in replies] == [200, 200]
    posts = await bot.answered(channel, 2)
    assert len(posts) == 2 and len({post.body["thread_ts"] for post in posts}) == 2


async def test_loading_status_shows_in_the_thread_before_the_answer(bot: Harness) -> None:
    channel = new_channel()
    event = mentioned(channel, FAILOVER)
    await bot.sender.event(event)

    [answer] = await bot.answered(channel)
    status, cleared = bot.slack.calls_to("assistant.threads.setStatus")
    assert status.body["channel_id"] == channel and status.body["thread_ts"] == event["ts"]
    assert status.body["status"] and status.body["loading_messages"]
    assert status.at < answer.at and cleared.body["status"] == ""
    # Progress only: nothing but the verified card carries answer text.
    assert not bot.slack.calls_to("chat.startStream", ok=None)
    assert not bot.slack.calls_to("chat.update", ok=None)


async def test_without_the_loading_status_the_answer_comes_as_before(bot: Harness) -> None:
    bot.slack.fail("assistant.threads.setStatus", api_error("missing_scope"))
    channel = new_channel()
    await bot.sender.event(mentioned(channel, FAILOVER))

    [answer] = await bot.answered(channel)
    assert answer.body["blocks"]
    assert len(bot.slack.calls_to("reactions.add")) == 1
    assert bot.slack.calls_to("assistant.threads.setStatus", ok=False)


async def test_dm_is_answered_in_the_dm_with_an_intro_only_the_first_time(bot: Harness) -> None:
    dm, user = f"D_{uuid.uuid4().hex[:8].upper()}", f"U_{uuid.uuid4().hex[:8].upper()}"
    first = said(dm, FAILOVER, channel_type="im", user=user)
    await bot.sender.event(first)
    intro, answer = await bot.answered(dm, 2)
    assert "Hi, I'm runbook-bot" in intro.body["text"]
    assert answer.body["blocks"] and "thread_ts" not in answer.body

    await bot.sender.event(said(dm, REPLICA, channel_type="im", user=user))
    await bot.answered(dm, 3)
    assert len(bot.slack.calls_to("chat.postMessage", ok=None)) == 3
