"""A source failing three syncs in a row is reported to its tenant's default owner, once."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.core.owners.runbook_owners import set_default_owner
from bot.core.sources.alerts import SourceFailure, SourceFailureReports
from bot.core.sources.runs import run_sync
from bot.slack.blocks.source_status import render_source_failure
from rag import Settings, Store, add_source
from tests.git_repos import GitRepo, local_sources
from tests.hash_embedder import HashEmbedder


@pytest.fixture(scope="session")
def settings(settings: Settings) -> Settings:
    """The session's settings with the operator allowances for this module's sources:
    repositories on file:// and fakes on 127.0.0.1 (issue 36)."""
    return local_sources(settings)


class RecordingMessenger:
    """A ``SourceFailureMessenger`` that keeps what it was asked to send."""

    def __init__(self) -> None:
        self.sent: list[SourceFailure] = []

    async def send_source_failure(self, failure: SourceFailure) -> str:
        render_source_failure(failure)  # what Slack would get must be a valid card
        self.sent.append(failure)
        return "sent"


async def test_the_third_failure_in_a_row_is_reported_once_and_a_success_rearms_it(
    store: Store, settings: Settings, unique_tenant: str, tmp_path: Path
) -> None:
    repo = GitRepo(tmp_path / "repo")
    repo.write("disk.md", "# Disk full\n\nDelete old WAL segments.\n")
    repo.commit("one")
    row = await add_source(
        store,
        tenant=unique_tenant,
        name="ops",
        kind="git",
        settings={"url": repo.url, "branch": "release", "path": ""},
        credential=None,
        webhook_secret={"secret": "s"},
    )
    await set_default_owner(store, unique_tenant, "C0SRE1234")
    messenger = RecordingMessenger()
    reports = SourceFailureReports(store, messenger)
    embedder = HashEmbedder()

    for _ in range(5):
        await reports(await run_sync(store, embedder, row, settings=settings, cipher=None))

    [failure] = messenger.sent
    assert (failure.tenant, failure.source, failure.failures) == (unique_tenant, "ops", 3)
    assert failure.target == "C0SRE1234"
    assert "branch 'release' does not exist" in failure.error

    repo.git("branch", "release")
    synced = await run_sync(store, embedder, row, settings=settings, cipher=None)
    assert synced.synced
    repo.git("branch", "-D", "release")
    for _ in range(3):
        await reports(await run_sync(store, embedder, row, settings=settings, cipher=None))
    assert len(messenger.sent) == 2
