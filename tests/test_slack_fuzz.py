"""Hostile and malformed deliveries over HTTP to the real app, every one signed as Slack signs.

Each must end in a defined response (an ack, a usage or refusal card, or an ignored event) and
never in a 500 or an internal-error card; unsigned, forged and replayed ones must do nothing.
Run with ``-s`` to see how many cases each property tried.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import time
import uuid
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from typing import Any
from urllib.parse import urlencode

import aiohttp
import pytest
import pytest_asyncio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.core.conversation import storable
from bot.slack.blocks.notices import INTERNAL_ERROR
from rag import FastEmbedder, IngestReport, Settings, Store
from rag.answering.answerers import ExtractiveAnswerer
from tests.fakes.slack_api import BOT_USER_ID, SlackCall
from tests.test_slack_events import count_rows
from tests.test_slack_interactions import CHANNEL, PAYMENTS_502, SECRET, Harness, running_bot

FUZZ = settings(
    max_examples=150,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
# Cases that run the whole pipeline (embed, search, answer, store) cost ~0.15 s each.
FUZZ_PIPELINE = settings(FUZZ, max_examples=80)
TRIED: Counter[str] = Counter()

HOSTILE = [
    "<!channel>",
    "<!here>",
    "<@U123>",
    "<#C1|general>",
    "<https://evil.example|click>",
    "&amp;&lt;",
    "`",
    "```",
    "*",
    "\n",
    "\x00",
    "\x07",
    "\x1b[31m",
    "\u202e",
    "\u200f",
    "\ufeff",
    "\u0000\u0001\u001f",
    "שלום עולם",
    "مرحبا",
    "👩‍👩‍👧",
    "🔥" * 20,
    "Z̸̧͔̈́a̵l̷g̶o̵",
    "\U0010ffff",
    "\ud800",  # a lone surrogate: only reachable escaped in JSON
    "%",
    "%s%d{0}",
    "'; DROP TABLE answers; --",
    "help",
]
fragment = st.one_of(st.text(max_size=40), st.sampled_from(HOSTILE))
junk = st.lists(fragment, max_size=8).map("".join)
# Sometimes far past every limit: 40,000 characters and more.
long_junk = st.one_of(
    junk,
    st.tuples(st.sampled_from(HOSTILE + ["disk "]), st.integers(2_001, 40_000)).map(
        lambda t: (t[0] * t[1])[: max(t[1], 2_001)]
    ),
)
json_scalar = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), junk)
json_value = st.recursive(
    json_scalar,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(junk, inner, max_size=3),
    max_leaves=8,
)


@pytest.fixture(scope="module", autouse=True)
def report_cases() -> Iterator[None]:
    yield
    print(f"\nfuzz cases tried: {sum(TRIED.values())} {dict(sorted(TRIED.items()))}")


@pytest_asyncio.fixture(loop_scope="session")
async def bot(
    settings: Settings, store: Store, embedder: FastEmbedder, demo_corpus: IngestReport
) -> AsyncIterator[Harness]:
    async with running_bot(settings, store, embedder, ExtractiveAnswerer()) as harness:
        yield harness


def dumps(value: Any) -> str:
    """JSON as Slack sends it: non-ASCII escaped, so a lone surrogate travels as ``\\ud800``."""
    return json.dumps(value, ensure_ascii=True)


async def post_raw(
    bot: Harness,
    raw: bytes,
    content_type: str,
    *,
    secret: str = SECRET,
    timestamp: int | None = None,
    signed: bool = True,
) -> int:
    ts = str(timestamp if timestamp is not None else int(time.time()))
    headers = {"Content-Type": content_type}
    if signed:
        # Slack signs the raw bytes; slack_sdk's helper would first decode them as UTF-8.
        digest = hmac.new(secret.encode(), b"v0:" + ts.encode() + b":" + raw, hashlib.sha256)
        headers |= {
            "X-Slack-Request-Timestamp": ts,
            "X-Slack-Signature": f"v0={digest.hexdigest()}",
        }
    async with aiohttp.ClientSession() as session:
        async with session.post(bot.sender.url, data=raw, headers=headers) as resp:
            await resp.read()
            return resp.status


async def settled_calls(bot: Harness, since: int) -> list[SlackCall]:
    assert await bot.tasks.drain(15) == 0
    return bot.slack.calls[since:]


def internal_errors(calls: list[SlackCall]) -> list[SlackCall]:
    return [c for c in calls if INTERNAL_ERROR in str(c.body.get("text"))]


def event_body(event: Any, **envelope: Any) -> dict[str, Any]:
    return {
        "type": "event_callback",
        "team_id": "T_ACME",
        "api_app_id": "A_RUNBOOK",
        "event_id": f"Ev{time.time_ns()}",
        "event_time": int(time.time()),
        "event": event,
        "authorizations": [{"team_id": "T_ACME", "user_id": BOT_USER_ID, "is_bot": True}],
        **envelope,
    }


# Bodies Bolt parses: JSON objects, and form bodies that neither look like JSON nor carry a
# ``payload`` field (those are the unparseable cases below).
parseable = st.one_of(
    st.dictionaries(junk, json_value, max_size=4).map(lambda d: (dumps(d), "application/json")),
    st.tuples(
        junk.map(storable).filter(lambda s: not s.startswith("{") and "payload" not in s),
        st.sampled_from(["application/x-www-form-urlencoded", "text/plain", ""]),
    ),
)


@FUZZ
@given(body=parseable)
async def test_malformed_bodies_are_refused_or_ignored_never_a_500(
    bot: Harness, body: tuple[str, str]
) -> None:
    TRIED["malformed body"] += 1
    raw, content_type = body
    since = len(bot.slack.calls)
    status = await post_raw(bot, raw.encode(), content_type)
    assert status < 500
    assert internal_errors(await settled_calls(bot, since)) == []


# Bolt's adapter decodes and parses the body before it verifies the signature, and lets the
# error escape; bot/slack/routes.py turns that into a 400 instead of aiohttp's 500.
UNPARSEABLE = [
    pytest.param(b"{not json", "application/json", id="broken-json"),
    pytest.param(b"[1, 2]", "application/json", id="json-array"),
    pytest.param(b"null", "application/json", id="json-null"),
    pytest.param(b"{", "text/plain", id="brace-plain"),
    pytest.param(b"payload=%7Bnope", "application/x-www-form-urlencoded", id="bad-payload"),
    pytest.param(b"payload=%5B%5D", "application/x-www-form-urlencoded", id="payload-array"),
    pytest.param(b"\xff\xfe\x00garbage", "application/json", id="not-utf8"),
    pytest.param(b"text=\xff", "application/x-www-form-urlencoded", id="form-not-utf8"),
    # Bolt reads the user, channel and team ids out of the body while building the request.
    pytest.param(
        json.dumps({"type": "event_callback", "event": {"type": "app_mention", "user": True}}),
        "application/json",
        id="user-not-an-object",
    ),
    pytest.param(
        json.dumps({"type": "event_callback", "event": {"type": "x", "user": 7}}),
        "application/json",
        id="user-a-number",
    ),
]


@pytest.mark.parametrize(("raw", "content_type"), UNPARSEABLE)
@pytest.mark.parametrize("signed", [True, False], ids=["signed", "unsigned"])
async def test_unparseable_bodies_are_a_4xx_not_a_500(
    bot: Harness, raw: bytes | str, content_type: str, signed: bool
) -> None:
    TRIED["unparseable body"] += 1
    body = raw if isinstance(raw, bytes) else raw.encode()
    status = await post_raw(bot, body, content_type, signed=signed)
    assert status in (400, 401)
    assert await bot.tasks.drain(5) == 0 and bot.slack.calls == []


MENTION_FIELDS = ("type", "user", "text", "ts", "channel", "event_ts", "team")
# Ids Bolt itself reads while building the request: odd types there are the 400s above.
odd_fields = st.dictionaries(
    st.sampled_from(["type", "text", "ts", "event_ts"]), json_value, max_size=2
) | st.dictionaries(st.sampled_from(["user", "channel", "team"]), junk, max_size=2)


@FUZZ
@given(
    drop=st.sets(st.sampled_from(MENTION_FIELDS)),
    drop_envelope=st.sets(st.sampled_from(["team_id", "event", "event_id", "authorizations"])),
    event_type=st.sampled_from(["app_mention", "message", "reaction_added", "no_such_event"])
    | junk,
    odd=odd_fields,
)
async def test_events_with_missing_or_odd_fields_are_acked_and_never_crash(
    bot: Harness,
    drop: set[str],
    drop_envelope: set[str],
    event_type: str,
    odd: dict[str, Any],
) -> None:
    TRIED["odd event"] += 1
    ts = f"{time.time():.6f}"
    event: dict[str, Any] = {
        "type": event_type,
        "user": "U_ALICE",
        "text": f"<@{BOT_USER_ID}> disk pressure",
        "ts": ts,
        "event_ts": ts,
        "channel": CHANNEL,
        "team": "T_ACME",
        **odd,
    }
    body = event_body({k: v for k, v in event.items() if k not in drop})
    body = {k: v for k, v in body.items() if k not in drop_envelope}
    since = len(bot.slack.calls)
    status = await post_raw(bot, dumps(body).encode(), "application/json")
    assert status < 500
    if "event" in body and "type" not in drop and isinstance(body["event"]["type"], str):
        # A well-formed delivery of any event type is acked, or Slack retries it and
        # eventually disables the app's event subscription.
        assert status == 200
    assert internal_errors(await settled_calls(bot, since)) == []


@FUZZ_PIPELINE
@given(text=long_junk, in_thread=st.booleans())
async def test_mentions_of_any_text_get_one_polite_card(
    bot: Harness, text: str, in_thread: bool
) -> None:
    TRIED["mention text"] += 1
    ts = f"{time.time():.6f}"
    event = {
        "type": "app_mention",
        "user": "U_ALICE",
        "text": f"<@{BOT_USER_ID}> {text}",
        "ts": ts,
        "channel": CHANNEL,
        "team": "T_ACME",
    }
    if in_thread:
        event["thread_ts"] = "1700000000.000001"  # no such thread at the fake: unreadable root
    since = len(bot.slack.calls)
    assert await post_raw(bot, dumps(event_body(event)).encode(), "application/json") == 200
    calls = await settled_calls(bot, since)
    posts = [c for c in calls if c.method == "chat.postMessage"]
    assert len(posts) == 1 and internal_errors(posts) == []
    question = " ".join(storable(text).split())
    if len(question) > 2_000:
        assert "the limit is 2000" in posts[0].body["text"].replace(",", "")


@FUZZ_PIPELINE
@given(text=long_junk, drop=st.sets(st.sampled_from(["team_id", "channel_id", "user_id"])))
async def test_runbook_command_with_any_text_answers_or_shows_usage(
    bot: Harness, text: str, drop: set[str]
) -> None:
    TRIED["command text"] += 1
    fields = {
        "command": "/runbook",
        "text": text.replace("\ud800", "?"),  # form bodies are UTF-8: no lone surrogates
        "team_id": "T_ACME",
        "channel_id": CHANNEL,
        "user_id": "U_ALICE",
        "api_app_id": "A_RUNBOOK",
        "response_url": bot.slack.response_url(),
        "trigger_id": f"trigger-1-{uuid.uuid4().hex[:12]}",  # unique, as Slack makes them
    }
    fields = {k: v for k, v in fields.items() if k not in drop}
    since = len(bot.slack.calls)
    raw = urlencode(fields).encode()
    assert await post_raw(bot, raw, "application/x-www-form-urlencoded") == 200
    calls = await settled_calls(bot, since)
    assert internal_errors(calls) == []
    assert len([c for c in calls if c.method == "response_url"]) <= 1


@FUZZ
@given(
    action_id=st.sampled_from(
        ["show_quote:1", "hide_quote:99999999999999999999", "share_answer", "retry_answer"]
        + ["feedback", "no_such_action", "show_quote:x"]
    )
    | junk,
    value=st.one_of(
        junk,
        st.uuids().map(str),
        st.uuids().map(lambda u: f"{u}:up"),
        json_value.map(dumps),
    ),
    ephemeral=st.booleans(),
    team=st.sampled_from(["T_ACME", "T_STRANGER", ""]),
)
async def test_button_clicks_with_unknown_ids_or_garbage_values_are_refused_politely(
    bot: Harness, action_id: str, value: str, ephemeral: bool, team: str
) -> None:
    TRIED["button click"] += 1
    payload = {
        "type": "block_actions",
        "team": {"id": team},
        "user": {"id": "U_BOB", "team_id": team},
        "api_app_id": "A_RUNBOOK",
        "container": {
            "type": "message",
            "message_ts": "1.0",
            "channel_id": CHANNEL,
            "is_ephemeral": ephemeral,
        },
        "channel": {"id": CHANNEL},
        "response_url": bot.slack.response_url(),
        "trigger_id": f"trigger-2-{uuid.uuid4().hex[:12]}",  # unique, as Slack makes them
        "actions": [{"action_id": action_id, "block_id": "b1", "value": value}],
    }
    since = len(bot.slack.calls)
    raw = urlencode({"payload": dumps(payload)}).encode()
    assert await post_raw(bot, raw, "application/x-www-form-urlencoded") == 200
    calls = await settled_calls(bot, since)
    assert internal_errors(calls) == []
    assert [c for c in calls if c.method in ("chat.postMessage", "chat.update")] == []


async def test_an_over_long_question_gets_a_card_that_states_the_limit(bot: Harness) -> None:
    TRIED["over-long question"] += 1
    reply = await bot.sender.event(
        {
            "type": "app_mention",
            "user": "U_ALICE",
            "text": f"<@{BOT_USER_ID}> " + "disk pressure " * 3_000,
            "ts": f"{time.time():.6f}",
            "channel": CHANNEL,
        }
    )
    assert reply.status == 200
    [post] = await bot.settle("chat.postMessage")
    assert "the limit is 2000" in post.body["text"]
    assert "Couldn't search for that" in json.dumps(post.body["blocks"])


async def test_forged_replayed_and_unsigned_requests_get_401_and_nothing_happens(
    bot: Harness,
) -> None:
    answers_before = await count_rows(bot.store, "answers")
    event = {
        "type": "app_mention",
        "user": "U_ALICE",
        "text": f"<@{BOT_USER_ID}> {PAYMENTS_502}",
        "ts": f"{time.time():.6f}",
        "channel": CHANNEL,
    }
    mention = dumps(event_body(event)).encode()
    command = urlencode(
        {"command": "/runbook", "text": PAYMENTS_502, "team_id": "T_ACME"}
        | {"response_url": bot.slack.response_url()}
    ).encode()
    form = "application/x-www-form-urlencoded"
    statuses = []
    for raw, content_type in ((mention, "application/json"), (command, form)):
        TRIED["forged/replayed/unsigned"] += 3
        statuses += [
            await post_raw(bot, raw, content_type, secret="not-the-signing-secret"),
            await post_raw(bot, raw, content_type, timestamp=int(time.time()) - 301),
            await post_raw(bot, raw, content_type, signed=False),
        ]
    assert statuses == [401] * 6
    assert await bot.tasks.drain(5) == 0
    assert bot.slack.calls == []
    assert await count_rows(bot.store, "answers") == answers_before
