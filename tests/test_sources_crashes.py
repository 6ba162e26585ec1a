"""A sync that meets something unexpected fails that source alone, on the record: a file name
that is not UTF-8 is a skipped item, any other surprise is the source's failure (its kind,
never its text), and `runbook source sync` goes on to the sources after it."""

from __future__ import annotations

import json
import os
import subprocess
import uuid
from pathlib import Path

from bot.core.jobs.queue import Job
from bot.core.sources.jobs import SYNC_KIND, SourceSyncJob
from bot.core.sources.runs import SyncOutcome
from rag import FastEmbedder, Settings, SourceRow, Store, add_source, get_source
from tests.git_repos import GitRepo
from tests.test_slack_cli import runbook
from tests.test_sources_cli import DISK, RST, cli_env

# Latin-1 "café.md": valid bytes for a Linux file name and for git, not UTF-8.
LATIN1_NAME = b"caf\xe9.md"


def sync_job(row: SourceRow) -> Job:
    return Job(
        job_id=uuid.uuid4(),
        kind=SYNC_KIND,
        payload={"source_id": str(row.source_id)},
        attempts=1,
        max_attempts=3,
        age_s=0.0,
        overdue=False,
        lease_token=uuid.uuid4(),
        tenant_id=row.tenant_id,
        answer_id=None,
    )


def repo_with_a_latin1_file_name(root: Path) -> GitRepo:
    repo = GitRepo(root)
    repo.write("disk.md", DISK)
    (repo.root / os.fsdecode(LATIN1_NAME)).write_bytes(b"# Cafe\n\nBrew the coffee.\n")
    repo.commit("a runbook whose name is not UTF-8")
    listed = subprocess.run(
        ["git", "ls-files", "-z"], cwd=repo.root, capture_output=True, check=True
    ).stdout
    assert LATIN1_NAME in listed.split(b"\0")  # git keeps the raw bytes
    return repo


async def test_a_file_name_that_is_not_utf8_is_skipped_with_a_reason_and_the_next_sync_runs(
    store: Store, database_url: str, unique_tenant: str, tmp_path: Path
) -> None:
    repo = repo_with_a_latin1_file_name(tmp_path / "repo")
    env = cli_env(database_url, tmp_path / "data")
    added = runbook("source", "add", unique_tenant, "git", repo.url, "--name", "ops", env=env)
    assert added.returncode == 0, added.stderr

    first = runbook("source", "sync", "--tenant", unique_tenant, "--json", env=env)
    repo.write("certs.rst", RST)
    repo.commit("another runbook")
    second = runbook("source", "sync", "--tenant", unique_tenant, "--json", env=env)
    listed = runbook("source", "list", "--tenant", unique_tenant, "--json", env=env)

    assert first.returncode == 0, first.stdout + first.stderr
    assert second.returncode == 0, second.stdout + second.stderr
    [row] = json.loads(listed.stdout)["sources"]
    assert row["last_outcome"] == "synced"
    assert row["report"]["documents"]["added"] == 1  # certs; disk was unchanged
    [skipped] = row["report"]["skipped"]
    assert skipped["path"] == "caf\\xe9.md"
    assert "not valid UTF-8" in skipped["reason"]
    asked = runbook(
        "ask", "--tenant", unique_tenant, "--json", "how do I renew the certificate?", env=env
    )
    assert json.loads(asked.stdout)["citations"][0]["document_id"] == "certs"


async def test_an_unexpected_error_fails_that_source_on_record_and_the_sync_goes_on(
    store: Store, database_url: str, unique_tenant: str, tmp_path: Path
) -> None:
    good = GitRepo(tmp_path / "good")
    good.write("disk.md", DISK)
    good.commit("one")
    # A row a newer release wrote (a setting this build does not know): its reader cannot be
    # built, and pydantic's ValidationError is none of the project's own errors.
    await add_source(
        store,
        tenant=unique_tenant,
        name="a-newer-release",
        kind="git",
        settings={"url": good.url, "branch": "main", "path": "", "depth": 1},
        credential=None,
        webhook_secret={"secret": "s"},
    )
    env = cli_env(database_url, tmp_path / "data")
    runbook("source", "add", unique_tenant, "git", good.url, "--name", "ops", env=env)

    synced = runbook("source", "sync", "--tenant", unique_tenant, "--json", env=env)
    listed = runbook("source", "list", "--tenant", unique_tenant, "--json", env=env)

    assert synced.returncode == 1, synced.stderr
    outcomes = {o["name"]: o for o in json.loads(synced.stdout)["sources"]}
    assert outcomes["ops"]["outcome"] == "synced"
    crashed = outcomes["a-newer-release"]
    assert crashed["outcome"] == "failed"
    assert crashed["error_code"] == "source_crashed"
    assert "ValidationError" in crashed["error"]
    assert "depth" not in crashed["error"]  # the kind only, never the exception's text
    rows = {r["name"]: r for r in json.loads(listed.stdout)["sources"]}
    assert rows["a-newer-release"]["last_outcome"] == "failed"
    assert rows["a-newer-release"]["consecutive_failures"] == 1
    assert rows["a-newer-release"]["last_error"] == crashed["error"]


async def test_the_serve_side_sync_records_an_unexpected_error_as_the_sources_failure(
    store: Store, embedder: FastEmbedder, settings: Settings, unique_tenant: str, tmp_path: Path
) -> None:
    repo = GitRepo(tmp_path / "repo")
    repo.write("disk.md", DISK)
    repo.commit("one")
    row = await add_source(
        store,
        tenant=unique_tenant,
        name="ops",
        kind="git",
        settings={"url": repo.url, "branch": "main", "path": "", "depth": 1},
        credential=None,
        webhook_secret={"secret": "s"},
    )

    told: list[SyncOutcome] = []

    async def tell(outcome: SyncOutcome) -> None:
        told.append(outcome)

    handler = SourceSyncJob(
        store=store, embedder=embedder, settings=settings, cipher=None, on_outcome=tell
    )
    for _ in range(2):
        await handler.run(sync_job(row))

    assert [(o.synced, o.error_code) for o in told] == [(False, "source_crashed")] * 2
    assert told[-1].failures_in_row == 2  # the owners' loop hears of the third
    stored = await get_source(store, row.source_id)
    assert stored is not None and stored.last_outcome == "failed"
    assert stored.last_error is not None and "ValidationError" in stored.last_error
