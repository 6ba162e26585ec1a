"""Teams answers as durable jobs (real app, real queue and worker, fake Bot Connector): a mention
is a job row before its 2xx, a re-run updates the card it already posted instead of posting
again, and a job past its deadline ends in the "could not answer in time" card."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from microsoft_agents.activity import Activity

from bot.core.jobs.queue import Job, JobRequest
from bot.teams.jobs.requests import ANSWER, AnswerRequest
from bot.teams.tenancy import add_teams_tenant
from rag import FastEmbedder, IngestReport, RagService, Settings, Store
from tests.adaptive_cards import card_of, rendered_texts
from tests.fakes.anthropic_api import FakeAnthropic, delay, tool_answer
from tests.fakes.bot_connector import FakeBotConnector
from tests.teams_harness import ServedTeams, mention, new_aad_tenant, served_teams, teams_settings
from tests.test_slack_interactions import claude_answerer

QUESTION = "how do I fail over the payments database?"


@asynccontextmanager
async def teams(
    settings: Settings, service: RagService, store: Store, **tuning: float
) -> AsyncIterator[tuple[ServedTeams, FakeBotConnector, str]]:
    aad = new_aad_tenant()
    await add_teams_tenant(store, aad, "acme")
    async with FakeBotConnector() as connector:
        local = teams_settings(settings, jwks_url="http://127.0.0.1:9/keys", local=True)
        local = local.model_copy(update=tuning)
        async with served_teams(settings=local, service=service, store=store) as served:
            yield served, connector, aad


async def job_rows(store: Store, key: str) -> list[tuple[str, str, int, str | None]]:
    async with store.pool.connection() as conn:
        cur = await conn.execute(
            "SELECT kind, state, attempts, outcome FROM jobs WHERE dedupe_key = %s", (key,)
        )
        return [(row[0], row[1], row[2], row[3]) for row in await cur.fetchall()]


async def test_a_mention_is_a_job_row_before_its_2xx_and_is_answered_once(
    settings: Settings, service: RagService, store: Store, acme_corpus: IngestReport
) -> None:
    async with teams(settings, service, store) as (served, connector, aad):
        activity = mention(QUESTION, service_url=connector.service_url, aad_tenant=aad)
        key = f"teams:{activity['conversation']['id'].split(';')[0]}:{activity['id']}"
        status, _, seconds = await served.send(activity)
        assert 200 <= status < 300 and seconds < 3
        [(kind, _, _, _)] = await job_rows(store, key)  # there by the time the 2xx arrived
        assert kind == ANSWER
        [message] = await connector.wait_for_messages(activity["conversation"]["id"], 1)
        assert await served.tasks.drain(10) == 0
    assert await job_rows(store, key) == [(ANSWER, "done", 1, "done")]
    assert "Action.ToggleVisibility" in json.dumps(message.final)


async def test_a_rerun_whose_card_was_posted_updates_that_activity_and_posts_nothing_new(
    settings: Settings, service: RagService, store: Store, acme_corpus: IngestReport
) -> None:
    # A long poll: the worker wakes only when told, so the first run below is this test's own.
    async with teams(settings, service, store, job_poll_s=60.0) as (served, connector, aad):
        activity = mention(QUESTION, service_url=connector.service_url, aad_tenant=aad)
        thread = activity["conversation"]["id"]
        job = await queued_answer(served, activity)
        handler = served.app.bot.job_handlers[ANSWER]
        assert not job.rerun
        await handler.run(job)  # posts "Searching…", then its card; then the process "dies"
        [first] = connector.live_messages(thread)
        first_card = card_of(first.final)
        async with store.pool.connection() as conn:  # its lease runs out
            await conn.execute(
                "UPDATE jobs SET available_at = now() WHERE job_id = %s", (job.job_id,)
            )
        served.jobs.new_work.set()
        await served.tasks.drain(10)
        [(_, state, attempts, _)] = await job_rows(store, f"test:{activity['id']}")

    assert (state, attempts) == ("done", 2)
    posts = [c for c in connector.calls if c.conversation == thread and c.kind in ("send", "reply")]
    updates = [c for c in connector.calls if c.conversation == thread and c.kind == "update"]
    assert len(posts) == 1, "the re-run posted nothing"
    assert len(updates) == 2 and {c.activity_id for c in updates} == {first.id}
    [kept] = connector.live_messages(thread)
    assert card_of(kept.final) == first_card, "the same stored answer, not a second ask"


async def test_a_job_past_its_deadline_replaces_searching_with_the_could_not_answer_card(
    settings: Settings, store: Store, embedder: FastEmbedder, acme_corpus: IngestReport
) -> None:
    slow = delay(10.0, tool_answer("not_in_sources", "The excerpts do not say."))
    async with FakeAnthropic(default=slow) as fake, claude_answerer(fake) as answerer:
        service = RagService(store=store, embedder=embedder, answerer=answerer, settings=settings)
        async with teams(settings, service, store, job_deadline_s=1.5) as (served, connector, aad):
            activity = mention(QUESTION, service_url=connector.service_url, aad_tenant=aad)
            status, _, _ = await served.send(activity)
            assert 200 <= status < 300
            await served.tasks.drain(10)
            [message] = connector.live_messages(activity["conversation"]["id"])
    shown = " ".join(rendered_texts(message.final))
    assert "Could not answer in time" in shown and "Ask again" in shown
    assert message.updates, "the 'Searching runbooks…' card gave way to it, in place"
    outcomes = [c.kind for c in connector.calls if c.conversation == message.conversation]
    assert outcomes == ["typing", "reply", "update"], "typing at once, then Searching…, updated"


async def queued_answer(served: ServedTeams, activity: dict[str, Any]) -> Job:
    """The mention's job, queued and claimed here as a worker would (without waking one)."""
    await asyncio.sleep(1.0)  # the worker's first look at the (empty) queue is over
    parsed = Activity.model_validate(activity)
    request = AnswerRequest(
        reference=parsed.get_conversation_reference(),
        aad_tenant=activity["conversation"]["tenantId"],
        channel_id=None,
        question=QUESTION,
        hints=(),
        entry="mention",
    )
    async with served.jobs.intake() as conn:
        await served.jobs.insert(
            conn, JobRequest(ANSWER, f"test:{activity['id']}", request.payload())
        )
    job = await served.jobs.claim([ANSWER])
    assert job is not None
    return job
