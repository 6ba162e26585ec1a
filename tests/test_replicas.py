"""Scale-out: three real ``runbook serve`` processes on one database behave as one bot.

Every event is delivered to two replicas (a Slack retry landing elsewhere, sometimes at the same
moment) and answered exactly once; "Show quote" is clicked on the third replica, which never saw
the event, and still re-renders the card from the answers table.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
import uuid
from collections import Counter, defaultdict
from contextlib import AsyncExitStack
from pathlib import Path

import aiohttp
import pytest
from cryptography.fernet import Fernet
from pydantic import SecretStr
from slack_sdk.oauth.installation_store import Installation

from bench.slack_app_process import AppProcess, app_env, app_process
from bot.core.token_cipher import TokenCipher
from bot.slack.oauth_stores import PostgresInstallationStore
from rag import IngestReport, Settings, Store, add_workspace
from tests import credentials
from tests.fakes.slack_api import BOT_USER_ID, FakeSlack, SlackCall, SlackSender

REPLICAS = 3
EVENTS = 300
IN_FLIGHT = 24
CHANNEL = "C_SCALE"
SECRET = credentials.SLACK_SIGNING_SECRET
# Answered from the demo corpus with citations, so every card carries a "Show quote" button.
QUESTION = "payments are throwing 502s, what do I check first?"

CIPHER = TokenCipher.from_setting(SecretStr(Fernet.generate_key().decode()), sealing="test secrets")


class PostIndex:
    """The fake's calls by thread or message ts, indexed incrementally: hundreds of waiters poll."""

    def __init__(self, slack: FakeSlack) -> None:
        self.slack = slack
        self.seen = 0
        self.posts: defaultdict[str, list[SlackCall]] = defaultdict(list)
        self.updates: defaultdict[str, list[SlackCall]] = defaultdict(list)

    def refresh(self) -> None:
        calls = self.slack.calls
        for call in calls[self.seen :]:
            if call.method == "chat.postMessage":
                self.posts[str(call.body.get("thread_ts"))].append(call)
            elif call.method == "chat.update":
                self.updates[str(call.body.get("ts"))].append(call)
        self.seen = len(calls)

    async def first(
        self, table: defaultdict[str, list[SlackCall]], key: str, within_s: float = 60
    ) -> SlackCall:
        deadline = time.monotonic() + within_s
        while True:
            self.refresh()
            if table[key]:
                return table[key][0]
            if time.monotonic() > deadline:
                raise AssertionError(f"nothing posted for {key} within {within_s}s")
            await asyncio.sleep(0.02)


def show_quote_value(post: SlackCall) -> str:
    for block in post.body.get("blocks") or []:
        for element in block.get("elements") or []:
            if isinstance(element, dict) and element.get("action_id") == "show_quote:1":
                return str(element["value"])
    raise AssertionError(f"no show_quote:1 button on the card in thread {post.body['thread_ts']}")


def counter_total(metrics_text: str, name: str) -> float:
    pattern = re.compile(rf"^{name}_total(?:{{[^}}]*}})? (\S+)$", re.MULTILINE)
    return sum(float(value) for value in pattern.findall(metrics_text))


async def scrape(app: AppProcess) -> str:
    async with aiohttp.ClientSession() as session:
        async with session.get(app.internal_url + "/metrics") as resp:
            return await resp.text()


@pytest.mark.slow  # starts three app processes, each loading the embedding model
async def test_retries_across_replicas_answer_once_and_buttons_work_on_any_replica(
    settings: Settings, store: Store, database_url: str, demo_corpus: IngestReport, tmp_path: Path
) -> None:
    await add_workspace(store, "T_ACME", "acme")
    acks: list[int] = []
    started = time.monotonic()
    async with FakeSlack() as slack, AsyncExitStack() as stack:
        env = app_env(
            database_url=database_url,
            data_dir=settings.data_dir,
            signing_secret=SECRET,
            bot_token=credentials.SLACK_BOT_TOKEN,
            slack_api_url=slack.base_url,
            onnx_threads=1,
        )
        starting = [
            app_process(env=env, log_path=tmp_path / f"replica-{n}.log") for n in range(REPLICAS)
        ]
        async with asyncio.TaskGroup() as group:
            entered = [group.create_task(stack.enter_async_context(cm)) for cm in starting]
        replicas = [task.result() for task in entered]
        senders = [SlackSender(app.events_url, SECRET) for app in replicas]
        ready = time.monotonic()
        index = PostIndex(slack)
        gate = asyncio.Semaphore(IN_FLIGHT)

        async def converse(i: int) -> None:
            first, second, third = (senders[(i + k) % REPLICAS] for k in range(REPLICAS))
            ts = f"1810000000.{i:06d}"
            event = {
                "type": "app_mention",
                "user": "U_ONCALL",
                "channel": CHANNEL,
                "ts": ts,
                "text": f"<@{BOT_USER_ID}> {QUESTION}",
            }
            event_id = f"EvREPL{i:04d}{uuid.uuid4().hex[:8]}"
            async with gate:
                if i % 2:  # both copies at once, as when Slack retries a slow first delivery
                    replies = list(
                        await asyncio.gather(
                            first.event(event, event_id=event_id),
                            second.event(event, event_id=event_id, retry_num=1),
                        )
                    )
                else:  # the retry arrives after the first delivery was acked
                    replies = [await first.event(event, event_id=event_id)]
                    replies.append(await second.event(event, event_id=event_id, retry_num=1))
                acks.extend(reply.status for reply in replies)
                post = await index.first(index.posts, ts)
                message_ts = str(post.reply["ts"])
                click = {
                    "type": "block_actions",
                    "team": {"id": "T_ACME"},
                    "user": {"id": "U_ONCALL", "team_id": "T_ACME"},
                    "api_app_id": "A_RUNBOOK",
                    "container": {
                        "type": "message",
                        "message_ts": message_ts,
                        "channel_id": CHANNEL,
                        "is_ephemeral": False,
                    },
                    "channel": {"id": CHANNEL},
                    "response_url": slack.response_url(f"click-{i}"),
                    "trigger_id": f"trigger-{i}",
                    "actions": [{"action_id": "show_quote:1", "value": show_quote_value(post)}],
                }
                acks.append((await third.interaction(click)).status)
                await index.first(index.updates, message_ts)

        await asyncio.gather(*(converse(i) for i in range(EVENTS)))
        metrics = [await scrape(app) for app in replicas]
    # Leaving the stack sent SIGTERM to every replica and waited for it to drain: anything a
    # replica still had in flight has been posted by now.
    elapsed = time.monotonic() - started
    index.refresh()
    posts_per_event = Counter(len(index.posts[f"1810000000.{i:06d}"]) for i in range(EVENTS))
    answered = {str(calls[0].reply["ts"]) for calls in index.posts.values() if calls}
    updated = {ts for ts, calls in index.updates.items() if calls}
    dropped = sum(counter_total(text, "runbook_slack_duplicates_dropped") for text in metrics)
    figures = {
        "events": EVENTS,
        "deliveries": 2 * EVENTS,
        "answers": sum(len(calls) for calls in index.posts.values()),
        "duplicates_dropped": dropped,
        "show_quote_updates": len(updated),
        "startup_s": round(ready - started, 1),
        "seconds": round(elapsed, 1),
    }
    print(f"replicas: {figures}")

    assert posts_per_event == Counter({1: EVENTS}), posts_per_event
    assert updated == answered and len(updated) == EVENTS
    assert dropped == EVENTS
    assert Counter(acks) == Counter({200: 3 * EVENTS}), Counter(acks)
    assert not [c for c in slack.calls if c.status >= 500 or not c.ok]
    assert [app.process.returncode for app in replicas] == [0] * REPLICAS


def rotated(found: Installation, replica: str) -> Installation:
    """What Bolt's token rotator saves: a copy of what it found, with fresh tokens."""
    copy = Installation(**found.to_dict_for_copying())
    copy.bot_token = f"xoxb-rotated-by-{replica}"
    copy.bot_refresh_token = f"xoxe-rotated-by-{replica}"
    copy.bot_token_expires_at = int(time.time()) + 43200
    return copy


async def installed(replica: PostgresInstallationStore, team: str) -> Installation:
    await replica.async_save(
        Installation(
            app_id="A_RUNBOOK",
            team_id=team,
            user_id="U_INSTALLER",
            bot_token="xoxb-installed",
            bot_refresh_token="xoxe-installed",
            bot_token_expires_at=int(time.time()) + 60,
            bot_id="BBOT",
            bot_user_id=BOT_USER_ID,
        )
    )
    found = await replica.async_find_installation(enterprise_id=None, team_id=team)
    assert found is not None and found.bot_refresh_token == "xoxe-installed"
    return found


async def stored_bot_token(replica: PostgresInstallationStore, team: str) -> str | None:
    latest = await replica.async_find_installation(enterprise_id=None, team_id=team)
    bot = await replica.async_find_bot(enterprise_id=None, team_id=team)
    assert latest is not None and bot is not None and latest.bot_token == bot.bot_token
    return bot.bot_token


async def test_a_rotation_from_an_already_rotated_refresh_token_is_not_stored(
    store: Store,
) -> None:
    team = f"T_ROT{uuid.uuid4().hex[:8].upper()}"
    a, b = (
        PostgresInstallationStore(store, client_id="1111.2222", cipher=CIPHER) for _ in range(2)
    )
    seen_by_a = await installed(a, team)
    seen_by_b = await b.async_find_installation(enterprise_id=None, team_id=team)
    assert seen_by_b is not None

    await a.async_save(rotated(seen_by_a, "a"))
    await b.async_save(rotated(seen_by_b, "b"))  # spent the same refresh token: too late
    assert await stored_bot_token(b, team) == "xoxb-rotated-by-a"

    # The next rotation starts from the stored token, so it is saved.
    latest = await b.async_find_installation(enterprise_id=None, team_id=team)
    assert latest is not None
    await b.async_save(rotated(latest, "c"))
    assert await stored_bot_token(a, team) == "xoxb-rotated-by-c"


async def test_two_replicas_rotating_one_refresh_token_at_once_store_one_rotation(
    store: Store, caplog: pytest.LogCaptureFixture
) -> None:
    team = f"T_ROT{uuid.uuid4().hex[:8].upper()}"
    a, b = (
        PostgresInstallationStore(store, client_id="1111.2222", cipher=CIPHER) for _ in range(2)
    )
    seen_by_a = await installed(a, team)
    seen_by_b = await b.async_find_installation(enterprise_id=None, team_id=team)
    assert seen_by_b is not None

    with caplog.at_level(logging.INFO, logger="bot.slack.oauth_stores"):
        await asyncio.gather(
            a.async_save(rotated(seen_by_a, "a")), b.async_save(rotated(seen_by_b, "b"))
        )
    refused = [r for r in caplog.records if "already rotated" in r.getMessage()]
    assert len(refused) == 1  # the advisory lock ordered the saves; the second saw the first
    assert await stored_bot_token(a, team) in ("xoxb-rotated-by-a", "xoxb-rotated-by-b")
