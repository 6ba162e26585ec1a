"""The real app over HTTP against a fake Slack: /runbook, the alert shortcut, and the buttons."""

from __future__ import annotations

import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import anthropic
import pytest_asyncio
from pydantic import SecretStr
from slack_sdk.web.async_client import AsyncWebClient

from bot.core.answers.store import AnswerStore
from bot.core.tasks import BackgroundTasks
from rag import (
    Answerer,
    Embedder,
    FastEmbedder,
    IngestReport,
    RagService,
    Settings,
    Store,
    add_workspace,
)
from rag.answering.answerers import ClaudeAnswerer, ExtractiveAnswerer
from tests import credentials
from tests.fakes.anthropic_api import FakeAnthropic, delay, error, tool_answer
from tests.fakes.slack_api import BOT_USER_ID, FakeSlack, SlackCall, SlackSender, api_error
from tests.slack_harness import served_app
from tests.test_slack_alerts import ALERTMANAGER, PAGERDUTY

SECRET = credentials.SLACK_SIGNING_SECRET
CHANNEL = "C_INCIDENT"
PAYMENTS_502 = "payments are throwing 502s, what do I check first?"
NOT_IN_SOURCES = tool_answer("not_in_sources", "The excerpts do not say.")


@dataclass
class Harness:
    slack: FakeSlack
    sender: SlackSender
    tasks: BackgroundTasks
    store: Store
    internal_url: str  # /healthz and /metrics

    async def settle(self, method: str, count: int = 1) -> list[SlackCall]:
        calls = await self.slack.wait_for(method, count)
        assert await self.tasks.drain(10) == 0
        return calls

    async def reply_for(self, key: str) -> SlackCall:
        """The one response_url reply sent to ``key``, once every listener has finished."""
        await self.slack.wait_for("response_url", where=lambda call: call.key == key)
        assert await self.tasks.drain(10) == 0
        [reply] = [c for c in self.slack.calls_to("response_url") if c.key == key]
        return reply

    async def command(self, text: str, *, key: str = "cmd") -> float:
        fields = {
            "command": "/runbook",
            "text": text,
            "team_id": "T_ACME",
            "channel_id": CHANNEL,
            "user_id": "U_ALICE",
            "api_app_id": "A_RUNBOOK",
            "response_url": self.slack.response_url(key),
            "trigger_id": f"trigger-1-{uuid.uuid4().hex[:12]}",  # unique, as Slack makes them
        }
        reply = await self.sender.command(fields)
        assert reply.status == 200
        return reply.seconds

    async def mention(self, text: str) -> SlackCall:
        ts = f"{time.time():.6f}"
        event = {"type": "app_mention", "user": "U_ALICE", "channel": CHANNEL, "ts": ts}
        await self.sender.event({**event, "text": f"<@{BOT_USER_ID}> {text}"})
        [post] = await self.settle("chat.postMessage")
        return post

    async def click(
        self,
        action_id: str,
        value: str,
        *,
        message_ts: str,
        ephemeral: bool = False,
        team_id: str = "T_ACME",
        key: str = "click",
    ) -> None:
        container = {"type": "message", "message_ts": message_ts, "channel_id": CHANNEL}
        payload = {
            "type": "block_actions",
            "team": {"id": team_id},
            "user": {"id": "U_BOB", "team_id": team_id},
            "api_app_id": "A_RUNBOOK",
            "container": {**container, "is_ephemeral": ephemeral},
            "channel": {"id": CHANNEL},
            "response_url": self.slack.response_url(key),
            "trigger_id": f"trigger-2-{uuid.uuid4().hex[:12]}",  # unique, as Slack makes them
            "actions": [{"action_id": action_id, "block_id": "b1", "value": value}],
        }
        assert (await self.sender.interaction(payload)).status == 200

    async def shortcut(self, message: dict[str, Any]) -> None:
        payload = {
            "type": "message_action",
            "callback_id": "ask_runbooks",
            "team": {"id": "T_ACME"},
            "user": {"id": "U_ALICE", "team_id": "T_ACME"},
            "channel": {"id": CHANNEL},
            "message": message,
            "response_url": self.slack.response_url("shortcut"),
            "trigger_id": f"trigger-3-{uuid.uuid4().hex[:12]}",  # unique, as Slack makes them
        }
        assert (await self.sender.interaction(payload)).status == 200


@asynccontextmanager
async def running_bot(
    settings: Settings, store: Store, embedder: Embedder, answerer: Answerer
) -> AsyncIterator[Harness]:
    await add_workspace(store, "T_ACME", "acme")
    slack_settings = settings.model_copy(update={"slack_signing_secret": SecretStr(SECRET)})
    service = RagService(store=store, embedder=embedder, answerer=answerer, settings=slack_settings)
    async with FakeSlack() as slack:
        client = AsyncWebClient(token=credentials.SLACK_BOT_TOKEN, base_url=slack.base_url)
        async with served_app(
            settings=slack_settings, service=service, store=store, client=client
        ) as served:
            sender = SlackSender(served.events_url, SECRET)
            yield Harness(slack, sender, served.tasks, store, served.internal_url)


@asynccontextmanager
async def claude_answerer(fake: FakeAnthropic) -> AsyncIterator[ClaudeAnswerer]:
    client = anthropic.AsyncAnthropic(
        api_key="sk-test", base_url=fake.base_url, max_retries=0, timeout=30
    )
    answerer = ClaudeAnswerer(client=client, model="claude-test")
    try:
        yield answerer
    finally:
        await answerer.aclose()


@pytest_asyncio.fixture(loop_scope="session")
async def bot(
    settings: Settings, store: Store, embedder: FastEmbedder, demo_corpus: IngestReport
) -> AsyncIterator[Harness]:
    async with running_bot(settings, store, embedder, ExtractiveAnswerer()) as harness:
        yield harness


def buttons(call: SlackCall) -> dict[str, str]:
    """action_id → value of every button on the card."""
    found: dict[str, str] = {}
    for block in call.body.get("blocks") or []:
        for element in block.get("elements") or []:
            if isinstance(element, dict) and "action_id" in element:
                found[element["action_id"]] = element.get("value", "")
    return found


def blocks_text(call: SlackCall) -> str:
    return str(call.body.get("blocks"))


async def stored(store: Store, answer_id: str) -> dict[str, Any]:
    async with store.pool.connection() as conn:
        cur = await conn.execute(
            "SELECT question, service, ephemeral, result FROM answers "
            "WHERE tenant_id = 'acme' AND answer_id = %s",
            (uuid.UUID(answer_id),),
        )
        row = await cur.fetchone()
    assert row is not None
    return {"question": row[0], "service": row[1], "ephemeral": row[2], "result": row[3]}


async def test_runbook_acks_before_a_slow_answer_and_answers_via_the_response_url(
    settings: Settings, store: Store, embedder: FastEmbedder, demo_corpus: IngestReport
) -> None:
    async with FakeAnthropic(default=delay(5.0, NOT_IN_SOURCES)) as fake:
        async with claude_answerer(fake) as answerer:
            async with running_bot(settings, store, embedder, answerer) as bot:
                started = time.monotonic()
                ack_seconds = await bot.command(PAYMENTS_502)
                assert ack_seconds < 3.0
                assert bot.slack.calls_to("response_url") == []  # still being written
                # What a graceful shutdown does: wait for the answer in flight.
                assert await bot.tasks.drain(15) == 0
                [reply] = bot.slack.calls_to("response_url")
    assert reply.at - started >= 5.0 and fake.calls == 1
    assert reply.key == "cmd"
    assert reply.body["response_type"] == "ephemeral" and reply.body["replace_original"] is True
    assert reply.body["text"].startswith("No runbook evidence")


async def test_runbook_help_and_empty_text_show_usage_in_the_ack(bot: Harness) -> None:
    for text in ("help", ""):
        fields = {"command": "/runbook", "text": text, "team_id": "T_ACME"}
        reply = await bot.sender.command({**fields, "response_url": bot.slack.response_url()})
        assert reply.status == 200 and "Ask runbook-bot" in reply.body
    assert await bot.tasks.drain(5) == 0
    assert bot.slack.calls_to("response_url") == []


async def test_share_posts_the_private_answer_in_channel_once(bot: Harness) -> None:
    await bot.command(PAYMENTS_502)
    [private] = await bot.settle("response_url")
    answer_id = buttons(private)["share_answer"]

    await bot.click("share_answer", answer_id, message_ts="1.0", ephemeral=True, key="share")
    [shared] = await bot.settle("chat.postMessage")
    assert shared.body["channel"] == CHANNEL and "share_answer" not in buttons(shared)
    assert shared.body["unfurl_links"] is False
    assert (await bot.reply_for("share")).body.get("delete_original") is True

    await bot.click("share_answer", answer_id, message_ts="1.0", ephemeral=True, key="again")
    assert "already been shared" in (await bot.reply_for("again")).body["text"]
    assert len(bot.slack.calls_to("chat.postMessage", ok=None)) == 1


async def test_show_and_hide_quote_rerender_the_thread_card_with_chat_update(bot: Harness) -> None:
    post = await bot.mention(PAYMENTS_502)
    toggles = {k: v for k, v in buttons(post).items() if k.startswith("show_quote:")}
    action_id, answer_id = sorted(toggles.items())[0]
    n = action_id.split(":")[1]
    loaded = await AnswerStore(bot.store).load("acme", answer_id)
    assert loaded is not None
    quote = loaded.result.citations[0].quote  # re-read from the runbook: not stored

    await bot.click(action_id, answer_id, message_ts=post.reply["ts"])
    [shown] = await bot.settle("chat.update")
    assert (shown.body["channel"], shown.body["ts"]) == (CHANNEL, post.reply["ts"])
    assert f"hide_quote:{n}" in buttons(shown) and "rich_text" in blocks_text(shown)
    assert quote.split()[0] in blocks_text(shown)

    await bot.click(f"hide_quote:{n}", answer_id, message_ts=post.reply["ts"])
    await bot.settle("chat.update", 2)
    hidden = bot.slack.calls_to("chat.update")[-1]
    assert f"show_quote:{n}" in buttons(hidden) and hidden.body["blocks"] == post.body["blocks"]


async def test_show_quote_on_a_private_answer_replaces_it_via_the_response_url(
    bot: Harness,
) -> None:
    await bot.command(PAYMENTS_502)
    [private] = await bot.settle("response_url")
    action_id, answer_id = next((k, v) for k, v in buttons(private).items() if "show_quote" in k)

    await bot.click(action_id, answer_id, message_ts="1.0", ephemeral=True, key="show")
    shown = await bot.reply_for("show")
    assert shown.body["replace_original"] is True
    assert action_id.replace("show", "hide") in buttons(shown)
    assert bot.slack.calls_to("chat.update", ok=None) == []


async def test_retry_reruns_the_stored_question_and_replaces_the_error_card(
    settings: Settings, store: Store, embedder: FastEmbedder, demo_corpus: IngestReport
) -> None:
    async with FakeAnthropic(default=NOT_IN_SOURCES) as fake:
        fake.enqueue(error(529))
        async with claude_answerer(fake) as answerer:
            async with running_bot(settings, store, embedder, answerer) as bot:
                post = await bot.mention(PAYMENTS_502)
                assert post.body["text"].startswith("Couldn't answer right now")
                answer_id = buttons(post)["retry_answer"]

                await bot.click("retry_answer", answer_id, message_ts=post.reply["ts"])
                searching, replaced = await bot.settle("chat.update", 2)
    assert searching.body["text"] == "Searching runbooks…"
    assert replaced.body["ts"] == post.reply["ts"]
    assert replaced.body["text"].startswith("No runbook evidence")
    assert "retry_answer" not in buttons(replaced) and fake.calls == 2


async def test_feedback_is_stored_and_acknowledged_privately(bot: Harness) -> None:
    post = await bot.mention(PAYMENTS_502)
    answer_id = await stored_by_ts(bot.store, post.reply["ts"])

    for vote in ("up", "down"):
        await bot.click("feedback", f"{answer_id}:{vote}", message_ts=post.reply["ts"], key=vote)
        assert "Thanks" in (await bot.reply_for(vote)).body["text"]
    async with bot.store.pool.connection() as conn:
        cur = await conn.execute(
            "SELECT user_id, value FROM feedback WHERE tenant_id = 'acme' AND answer_id = %s",
            (uuid.UUID(answer_id),),
        )
        assert await cur.fetchall() == [("U_BOB", "down")]  # a changed mind, one vote


async def test_a_click_from_another_workspace_cannot_load_the_answer(bot: Harness) -> None:
    await add_workspace(bot.store, "T_GLOBEX", "globex")
    post = await bot.mention(PAYMENTS_502)
    action_id, answer_id = next((k, v) for k, v in buttons(post).items() if "show_quote" in k)

    await bot.click(action_id, answer_id, message_ts=post.reply["ts"], team_id="T_GLOBEX")
    [reply] = await bot.settle("response_url")
    # The app's token is acme's: a globex user is outside the installation (Slack Connect).
    assert "not connected runbook-bot" in reply.body["text"]
    assert bot.slack.calls_to("chat.update", ok=None) == []


async def test_shortcut_on_a_pagerduty_post_answers_in_its_thread(bot: Harness) -> None:
    await bot.shortcut({"type": "message", "ts": "1700000500.000100", **PAGERDUTY})

    [post] = await bot.settle("chat.postMessage")
    assert (post.body["channel"], post.body["thread_ts"]) == (CHANNEL, "1700000500.000100")
    row = await stored(bot.store, await stored_by_ts(bot.store, post.reply["ts"]))
    assert "returning 502s" in row["question"] and row["service"] == "payments-gateway"
    assert row["result"]["status"] == "answered"


async def test_shortcut_on_an_alertmanager_reply_answers_in_that_thread(bot: Harness) -> None:
    message = {"type": "message", "ts": "1700000600.000200", "thread_ts": "1700000600.000100"}
    await bot.shortcut({**message, **ALERTMANAGER})

    [post] = await bot.settle("chat.postMessage")
    assert post.body["thread_ts"] == "1700000600.000100"
    row = await stored(bot.store, await stored_by_ts(bot.store, post.reply["ts"]))
    assert "KafkaConsumerLagHigh" in row["question"] and row["service"] == "kafka"


async def test_shortcut_where_the_bot_is_not_in_the_channel_answers_privately(
    bot: Harness,
) -> None:
    bot.slack.fail("chat.postMessage", api_error("not_in_channel"))
    await bot.shortcut({"type": "message", "ts": "1700000700.000100", **PAGERDUTY})

    [reply] = await bot.settle("response_url")
    assert reply.key == "shortcut" and reply.body["response_type"] == "ephemeral"
    assert "share_answer" in buttons(reply)
    assert bot.slack.calls_to("chat.postMessage") == []


async def stored_by_ts(store: Store, message_ts: str) -> str:
    async with store.pool.connection() as conn:
        cur = await conn.execute(
            "SELECT answer_id FROM answers WHERE tenant_id = 'acme' AND message_ts = %s",
            (message_ts,),
        )
        row = await cur.fetchone()
    assert row is not None
    return str(row[0])
