"""``POST /hooks/git/{source_id}`` against a running aiohttp app with a real queue and worker:
signed GitHub and GitLab pushes sync the source at once; anything unsigned is refused."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import time
import uuid
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path

import aiohttp
import pytest
from prometheus_client import CollectorRegistry

from bot.core.jobs.metrics import JobMetrics
from bot.core.jobs.queue import JobQueue
from bot.core.jobs.worker import JobHandlers, JobWorker
from bot.core.sources.jobs import SYNC_KIND, SourceSyncJob, queue_due_syncs
from bot.core.sources.runs import run_sync
from bot.core.tasks import BackgroundTasks
from bot.server import build_web_app, serving, working
from bot.source_hooks import source_hook_routes
from rag import (
    Embedder,
    FastEmbedder,
    RagService,
    Settings,
    SourceRow,
    Store,
    add_source,
    get_source,
)
from rag.embedding.embedder import Vectors
from tests.git_repos import GitRepo, local_sources
from tests.hash_embedder import HashEmbedder
from tests.slack_harness import forget_unfinished_jobs


@pytest.fixture(scope="session")
def settings(settings: Settings) -> Settings:
    """The session's settings with the operator allowances for this module's sources:
    repositories on file:// and fakes on 127.0.0.1 (issue 36)."""
    return local_sources(settings)


PORT = 31252
SECRET = "hook-secret-for-tests-0123456789"


@asynccontextmanager
async def bot_serving(store: Store, embedder: Embedder, settings: Settings) -> AsyncIterator[str]:
    """The public app with the hook route, and a worker that runs ``source.sync`` jobs."""
    await forget_unfinished_jobs(store)
    fast = settings.model_copy(update={"job_poll_s": 0.05})
    jobs = await JobQueue.open(store, fast)
    tasks = BackgroundTasks()
    handlers = JobHandlers()
    handlers.register(
        SYNC_KIND, SourceSyncJob(store=store, embedder=embedder, settings=fast, cipher=None)
    )
    worker = JobWorker(jobs, handlers, tasks=tasks, metrics=JobMetrics(CollectorRegistry()))
    app = build_web_app(surfaces=[source_hook_routes(store, jobs, None)])
    try:
        async with (
            working(worker, tasks, drain_s=5),
            serving(app, host="127.0.0.1", port=PORT) as port,
        ):
            yield f"http://127.0.0.1:{port}"
    finally:
        await jobs.close()
        await forget_unfinished_jobs(store)


async def synced_source(
    store: Store, embedder: FastEmbedder, settings: Settings, tenant: str, repo: GitRepo
) -> SourceRow:
    row = await add_source(
        store,
        tenant=tenant,
        name="ops",
        kind="git",
        settings={"url": repo.url, "branch": "main", "path": ""},
        credential=None,
        webhook_secret={"secret": SECRET},
    )
    first = await run_sync(store, embedder, row, settings=settings, cipher=None)
    assert first.synced, first.error
    return row


def github_headers(body: bytes, secret: str = SECRET) -> dict[str, str]:
    digest = hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    return {
        "X-Hub-Signature-256": f"sha256={digest}",
        "X-GitHub-Event": "push",
        "Content-Type": "application/json",
    }


async def post(url: str, body: bytes, headers: dict[str, str]) -> tuple[int, dict[str, str]]:
    async with (
        aiohttp.ClientSession() as session,
        session.post(url, data=body, headers=headers) as response,
    ):
        text = await response.text()
        return response.status, json.loads(text) if text.startswith("{") else {}


async def test_a_signed_github_push_makes_the_new_text_answerable_within_10_seconds(
    store: Store,
    embedder: FastEmbedder,
    settings: Settings,
    service: RagService,
    unique_tenant: str,
    tmp_path: Path,
) -> None:
    repo = GitRepo(tmp_path / "repo")
    repo.write("kafka.md", "# Kafka lag\n\n## Mitigation\nAdd two consumers to the group.\n")
    repo.commit("one")
    row = await synced_source(store, embedder, settings, unique_tenant, repo)
    async with bot_serving(store, embedder, settings) as base:
        repo.write(
            "kafka.md",
            "# Kafka lag\n\n## Mitigation\nPause the reindex job, then add four consumers.\n",
        )
        after = repo.commit("four consumers")
        body = json.dumps({"ref": "refs/heads/main", "after": after}).encode()

        started = time.monotonic()
        status, reply = await post(f"{base}/hooks/git/{row.source_id}", body, github_headers(body))
        answer = ""
        while time.monotonic() - started < 10:
            result = await service.ask(unique_tenant, "how many consumers for kafka lag?")
            answer = result.answer
            if "reindex" in answer:
                break
            await asyncio.sleep(0.2)
        elapsed = time.monotonic() - started

    assert (status, reply["status"]) == (202, "queued")
    assert "Pause the reindex job" in answer, answer
    assert elapsed < 10
    stored = await get_source(store, row.source_id)
    assert stored is not None and stored.last_version == after


async def test_wrong_or_missing_signatures_are_refused_and_queue_nothing(
    store: Store, embedder: FastEmbedder, settings: Settings, unique_tenant: str, tmp_path: Path
) -> None:
    repo = GitRepo(tmp_path / "repo")
    repo.write("disk.md", "# Disk full\n\nDelete old WAL segments.\n")
    repo.commit("one")
    row = await synced_source(store, embedder, settings, unique_tenant, repo)
    body = json.dumps({"ref": "refs/heads/main", "after": "f" * 40}).encode()
    async with bot_serving(store, embedder, settings) as base:
        url = f"{base}/hooks/git/{row.source_id}"
        wrong = await post(url, body, github_headers(body, secret="not-the-secret"))
        tampered = await post(url, body + b" ", github_headers(body))
        unsigned = await post(url, body, {"Content-Type": "application/json"})
        gitlab_wrong = await post(url, body, {"X-Gitlab-Token": "guess"})
        unknown = await post(f"{base}/hooks/git/{uuid.uuid4()}", body, github_headers(body))
        not_an_id = await post(f"{base}/hooks/git/x", body, github_headers(body))

    assert [s for s, _ in (wrong, tampered, unsigned, gitlab_wrong)] == [401, 401, 401, 401]
    assert unknown[0] == 404 and not_an_id[0] == 404
    async with store.pool.connection() as conn:
        cur = await conn.execute(
            "SELECT count(*) FROM jobs WHERE dedupe_key LIKE %s", (f"%{row.source_id}%",)
        )
        assert await cur.fetchone() == (0,)


async def test_a_gitlab_push_is_accepted_and_another_branch_is_ignored(
    store: Store, embedder: FastEmbedder, settings: Settings, unique_tenant: str, tmp_path: Path
) -> None:
    repo = GitRepo(tmp_path / "repo")
    repo.write("disk.md", "# Disk full\n\nDelete old WAL segments.\n")
    repo.commit("one")
    row = await synced_source(store, embedder, settings, unique_tenant, repo)
    other = json.dumps({"ref": "refs/heads/feature", "after": "a" * 40}).encode()
    ping = b'{"zen": "Keep it logically awesome."}'
    async with bot_serving(store, embedder, settings) as base:
        url = f"{base}/hooks/git/{row.source_id}"
        ignored = await post(url, other, github_headers(other))
        pinged = await post(url, ping, {**github_headers(ping), "X-GitHub-Event": "ping"})
        repo.write("disk.md", "# Disk full\n\nDelete old WAL segments, then vacuum.\n")
        after = repo.commit("vacuum")
        body = json.dumps({"ref": "refs/heads/main", "checkout_sha": after}).encode()
        gitlab = await post(url, body, {"X-Gitlab-Token": SECRET, "X-Gitlab-Event": "Push Hook"})
        again = await post(url, body, {"X-Gitlab-Token": SECRET, "X-Gitlab-Event": "Push Hook"})
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            stored = await get_source(store, row.source_id)
            if stored is not None and stored.last_version == after:
                break
            await asyncio.sleep(0.1)

    assert ignored == (202, {"status": "ignored", "reason": "not a push to main"})
    assert pinged == (202, {"status": "ignored", "reason": "ping"})
    assert gitlab[0] == 202 and gitlab[1]["status"] == "queued"
    assert again[1]["status"] == "duplicate"
    assert stored is not None and stored.last_version == after


async def test_the_schedule_queues_each_source_once_per_interval_across_replicas(
    store: Store, embedder: FastEmbedder, settings: Settings, unique_tenant: str, tmp_path: Path
) -> None:
    repo = GitRepo(tmp_path / "repo")
    repo.write("disk.md", "# Disk full\n\nDelete old WAL segments.\n")
    repo.commit("one")
    row = await synced_source(store, embedder, settings, unique_tenant, repo)
    await forget_unfinished_jobs(store)
    one, two = await JobQueue.open(store, settings), await JobQueue.open(store, settings)
    try:
        await queue_due_syncs(store, one, settings)
        await queue_due_syncs(store, two, settings)
    finally:
        await one.close()
        await two.close()
    async with store.pool.connection() as conn:
        cur = await conn.execute(
            "SELECT count(*) FROM jobs WHERE kind = %s AND dedupe_key LIKE %s",
            (SYNC_KIND, f"%{row.source_id}%"),
        )
        assert await cur.fetchone() == (1,)
    await forget_unfinished_jobs(store)


class SlowEmbedder(HashEmbedder):
    """Embeds as a large first sync does: for longer than an answer job may take."""

    async def embed(self, texts: Sequence[str]) -> Vectors:
        await asyncio.sleep(1.5)
        return await super().embed(texts)


async def test_a_sync_longer_than_an_answers_deadline_is_not_given_up(
    store: Store, settings: Settings, unique_tenant: str, tmp_path: Path
) -> None:
    repo = GitRepo(tmp_path / "repo")
    repo.write("kafka.md", "# Kafka lag\n\n## Mitigation\nAdd two consumers to the group.\n")
    after = repo.commit("one")
    row = await add_source(
        store,
        tenant=unique_tenant,
        name="ops",
        kind="git",
        settings={"url": repo.url, "branch": "main", "path": ""},
        credential=None,
        webhook_secret={"secret": SECRET},
    )
    answers_deadline = settings.model_copy(update={"job_deadline_s": 1.0})
    body = json.dumps({"ref": "refs/heads/main", "after": after}).encode()
    async with bot_serving(store, SlowEmbedder(), answers_deadline) as base:
        status, _ = await post(f"{base}/hooks/git/{row.source_id}", body, github_headers(body))
        synced = await get_source(store, row.source_id)
        while synced is not None and synced.last_outcome is None:
            await asyncio.sleep(0.1)
            synced = await get_source(store, row.source_id)
            async with store.pool.connection() as conn:
                cur = await conn.execute(
                    "SELECT state FROM jobs WHERE dedupe_key LIKE %s",
                    (f"{SYNC_KIND}:{row.source_id}:%",),
                )
                if [r[0] for r in await cur.fetchall()] == ["dead"]:
                    break  # given up: the sync will never be recorded

    assert status == 202
    assert synced is not None and synced.last_outcome == "synced"
    assert synced.last_version == after
