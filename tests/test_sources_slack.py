"""``/runbook sources`` in Slack: the tenant's sources and their last syncs, in the ack."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest

from bot.core.sources.runs import run_sync
from rag import Embedder, FastEmbedder, Settings, SourceRow, Store, add_source, remove_source
from rag.answering.answerers import ExtractiveAnswerer
from tests.git_repos import GitRepo, local_sources
from tests.test_slack_interactions import running_bot


@pytest.fixture(scope="session")
def settings(settings: Settings) -> Settings:
    """The session's settings with the operator allowances for this module's sources:
    repositories on file:// and fakes on 127.0.0.1 (issue 36)."""
    return local_sources(settings)


async def test_runbook_sources_lists_each_source_with_its_last_sync_privately(
    settings: Settings, store: Store, embedder: FastEmbedder, tmp_path: Path
) -> None:
    # The test app's bot token belongs to T_ACME, whose tenant is "acme" (``running_bot``).
    suffix = uuid.uuid4().hex[:6]
    repo = GitRepo(tmp_path / "repo")
    # A document id of its own: this runbook joins acme's for the test, then is retired.
    repo.write(f"disk-{suffix}.md", "# Disk full\n\nDelete old WAL segments.\n")
    (repo.root / "leak.md").symlink_to("/etc/passwd")
    repo.commit("one")
    rows = [
        await synced(store, embedder, settings, f"ops-{suffix}", repo.url, "main"),
        await synced(store, embedder, settings, f"legacy-{suffix}", repo.url, "gone"),
    ]
    try:
        async with running_bot(settings, store, embedder, ExtractiveAnswerer()) as bot:
            fields = {"command": "/runbook", "text": "sources", "team_id": "T_ACME"}
            reply = await bot.sender.command({**fields, "response_url": bot.slack.response_url()})
            assert await bot.tasks.drain(5) == 0
            assert bot.slack.calls_to("response_url") == []
    finally:
        for row in rows:
            await remove_source(store, row, prune=True)

    assert reply.status == 200
    card = json.loads(reply.body)
    text = json.dumps(card["blocks"])
    assert card["text"] == "Runbook sources of acme: 2"
    assert f"acme/ops-{suffix}" in text and f"acme/legacy-{suffix}" in text
    assert "1 added, 0 changed, 0 unchanged, 0 retired, 1 skipped, 0 failed" in text
    assert "skipped leak.md: symbolic link (not followed)" in text
    assert "FAILED (1 in a row)" in text and "branch 'gone' does not exist" in text
    assert card.get("response_type", "ephemeral") == "ephemeral"


async def synced(
    store: Store,
    embedder: Embedder,
    settings: Settings,
    name: str,
    url: str,
    branch: str,
) -> SourceRow:
    row = await add_source(
        store,
        tenant="acme",
        name=name,
        kind="git",
        settings={"url": url, "branch": branch, "path": ""},
        credential=None,
        webhook_secret={"secret": "s"},
    )
    await run_sync(store, embedder, row, settings=settings, cipher=None)
    return row
