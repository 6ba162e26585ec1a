"""``runbook source add … git --forge --api-url``: where drafted runbooks go, stored with the
source (ARCHITECTURE's contract), and refused where it does not apply."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from uuid import uuid4

from bot.core.drafts.destinations import forge_target
from rag import SourceRow, Store, list_sources
from tests.git_repos import GitRepo
from tests.test_slack_cli import runbook
from tests.test_sources_cli import cli_env


async def test_forge_and_api_url_are_stored_with_a_git_source(
    store: Store, database_url: str, unique_tenant: str, tmp_path: Path
) -> None:
    repo = GitRepo(tmp_path / "acme" / "runbooks.git")
    repo.write("runbooks/disk.md", "# Disk full\n")
    repo.commit("one")
    env = cli_env(database_url, tmp_path / "data", RUNBOOK_SOURCE_ALLOW_FILE="true")
    done = runbook(
        "source", "add", unique_tenant, "git", repo.url, "--branch", "main",
        "--forge", "gitlab", "--api-url", "https://git.example.com/api/v4/", "--json", env=env,
    )  # fmt: skip

    assert done.returncode == 0, done.stderr
    shown = json.loads(done.stdout)["settings"]
    assert (shown["forge"], shown["api_url"]) == ("gitlab", "https://git.example.com/api/v4")
    [row] = await list_sources(store, tenant=unique_tenant)
    target = forge_target(row)
    assert target is not None
    assert (target.forge, target.api_url, target.repo) == (
        "gitlab",
        "https://git.example.com/api/v4",
        "acme/runbooks",
    )


async def test_a_forge_api_url_on_an_internal_address_is_refused_like_the_source_url(
    store: Store, database_url: str, unique_tenant: str, tmp_path: Path
) -> None:
    repo = GitRepo(tmp_path / "acme" / "runbooks.git")
    repo.write("runbooks/disk.md", "# Disk full\n")
    repo.commit("one")
    env = cli_env(database_url, tmp_path / "data", RUNBOOK_SOURCE_ALLOW_FILE="true")
    done = runbook(
        "source", "add", unique_tenant, "git", repo.url, "--branch", "main",
        "--forge", "github", "--api-url", "http://169.254.169.254/api/v3", env=env,
    )  # fmt: skip

    assert done.returncode == 2, done.stdout
    assert "169.254.169.254" in done.stderr or "link-local" in done.stderr
    assert await list_sources(store, tenant=unique_tenant) == []


async def test_forge_options_are_refused_for_a_confluence_source(
    database_url: str, unique_tenant: str, tmp_path: Path
) -> None:
    done = runbook(
        "source", "add", unique_tenant, "confluence", "https://acme.atlassian.net/wiki",
        "--space", "OPS", "--pat-env", "NOPE", "--forge", "github",
        env=cli_env(database_url, tmp_path),
    )  # fmt: skip
    assert done.returncode == 2
    assert "--forge do not apply to a confluence source" in done.stderr


def test_github_and_gitlab_hosts_need_no_forge_option() -> None:
    def row(url: str) -> SourceRow:
        settings = {"url": url, "branch": "main", "path": ""}
        now = datetime.now(UTC)
        return SourceRow(
            uuid4(), "t", "n", "git", settings, None, {}, now, None, None, None, None, None, 0, None
        )

    github = forge_target(row("https://github.com/acme/runbooks.git"))
    gitlab = forge_target(row("git@gitlab.example.com:ops/sre/runbooks.git"))
    assert github is not None and (github.api_url, github.repo) == (
        "https://api.github.com",
        "acme/runbooks",
    )
    assert gitlab is not None and (gitlab.forge, gitlab.api_url, gitlab.repo) == (
        "gitlab",
        "https://gitlab.example.com/api/v4",
        "ops/sre/runbooks",
    )
    assert forge_target(row("https://git.internal/acme/runbooks.git")) is None
