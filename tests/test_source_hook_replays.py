"""A signed push webhook sent again after its job rows aged out is a duplicate (issue 36): the
signature covers the body alone, so whoever saw one delivery could otherwise queue syncs at
will, with any fresh ``X-GitHub-Delivery`` (that header is not signed)."""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from pathlib import Path

from bot.core.jobs.queue import JobQueue
from rag import FastEmbedder, Settings, Store, get_source
from tests.git_repos import GitRepo, local_sources
from tests.test_sources_webhooks import bot_serving, github_headers, post, synced_source


async def sync_jobs(store: Store, source_id: uuid.UUID) -> int:
    async with store.pool.connection() as conn:
        cur = await conn.execute(
            "SELECT count(*) FROM jobs WHERE dedupe_key LIKE %s", (f"source.sync:{source_id}:%",)
        )
        row = await cur.fetchone()
    return 0 if row is None else int(row[0])


async def test_a_signed_push_replayed_after_its_job_aged_out_queues_nothing(
    store: Store, embedder: FastEmbedder, settings: Settings, unique_tenant: str, tmp_path: Path
) -> None:
    allowing = local_sources(settings)
    repo = GitRepo(tmp_path / "repo")
    repo.write("kafka.md", "# Kafka lag\n\n## Mitigation\nAdd two consumers to the group.\n")
    repo.commit("one")
    row = await synced_source(store, embedder, allowing, unique_tenant, repo)
    async with bot_serving(store, embedder, allowing) as base:
        repo.write("kafka.md", "# Kafka lag\n\n## Mitigation\nAdd four consumers.\n")
        after = repo.commit("four consumers")
        body = json.dumps({"ref": "refs/heads/main", "after": after}).encode()
        hook = f"{base}/hooks/git/{row.source_id}"
        delivered = await post(hook, body, github_headers(body) | {"X-GitHub-Delivery": "d-1"})
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            stored = await get_source(store, row.source_id)
            if stored is not None and stored.last_version == after:
                break
            await asyncio.sleep(0.1)
        # The retention window passes: the finished sync's job row is pruned.
        aged = await JobQueue.open(store, allowing.model_copy(update={"job_retention_h": 1e-6}))
        try:
            await asyncio.sleep(0.05)
            await aged.prune()
        finally:
            await aged.close()
        assert await sync_jobs(store, row.source_id) == 0

        replayed = await post(hook, body, github_headers(body) | {"X-GitHub-Delivery": "d-2"})
        queued_after_replay = await sync_jobs(store, row.source_id)

    assert delivered == (202, {"status": "queued", "reason": "sync queued"})
    assert replayed[0] == 200 and replayed[1]["status"] == "duplicate"
    assert queued_after_replay == 0
