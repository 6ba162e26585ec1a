"""Progress (a loading status in the thread, the 🔍 reaction on the question) shows only when
the answer is not posted within ``RUNBOOK_PROGRESS_AFTER_MS`` of the request's arrival: a fast
answer costs one Web API call, not five; a slow one shows progress and takes it off again; a job
that waited in the queue gets a short grace once it runs. Against the fake Web API on loopback."""

from __future__ import annotations

import asyncio

from slack_sdk.web.async_client import AsyncWebClient

from bot.slack.delivery.progress import visible_progress
from tests import credentials
from tests.fakes.slack_api import FakeSlack

PROGRESS_CALLS = ("reactions.add", "reactions.remove", "assistant.threads.setStatus")


async def _answer_taking(
    slack: FakeSlack, seconds: float, *, after_ms: int, waited_s: float = 0.0
) -> list[str]:
    client = AsyncWebClient(token=credentials.SLACK_BOT_TOKEN, base_url=slack.base_url)
    async with visible_progress(
        client,
        channel="C_INC",
        ts="1700000000.000100",
        thread_ts="1700000000.000100",
        after_ms=after_ms,
        waited_s=waited_s,
    ):
        await asyncio.sleep(seconds)
    return [c.method for c in slack.calls if c.method in PROGRESS_CALLS]


async def test_an_answer_made_within_the_allowance_shows_no_progress_at_all() -> None:
    async with FakeSlack() as slack:
        assert await _answer_taking(slack, 0.02, after_ms=500) == []


async def test_a_slow_answer_shows_progress_and_takes_it_off_after() -> None:
    async with FakeSlack() as slack:
        seen = await _answer_taking(slack, 0.4, after_ms=50)
        status, cleared = slack.calls_to("assistant.threads.setStatus")
    assert sorted(seen) == sorted(PROGRESS_CALLS + ("assistant.threads.setStatus",))
    assert status.body["status"] and cleared.body["status"] == ""
    assert status.at < cleared.at


async def test_a_job_that_waited_in_the_queue_shows_progress_soon_after_it_starts() -> None:
    async with FakeSlack() as slack:
        seen = await _answer_taking(slack, 0.5, after_ms=500, waited_s=0.6)
    assert "reactions.add" in seen and "reactions.remove" in seen


async def test_a_queued_job_whose_answer_comes_at_once_shows_no_progress() -> None:
    # A burst queues the answers; it does not slow them once they run.
    async with FakeSlack() as slack:
        assert await _answer_taking(slack, 0.02, after_ms=500, waited_s=0.6) == []
