"""``runbook source add|list|sync|remove`` run as a user would, against real git repositories
and the session's database; credentials stay sealed and out of every output."""

from __future__ import annotations

import json
from pathlib import Path

from cryptography.fernet import Fernet

from rag import Store, list_sources
from tests import credentials
from tests.git_repos import GitRepo
from tests.test_slack_cli import runbook

DISK = "# Disk full\n\n## Mitigation\nDelete old WAL segments only after a verified backup.\n"
RST = (
    "Certificate expiry\n==================\n\nRenewal\n-------\n\nRun certbot renew on the edge.\n"
)


def cli_env(database_url: str, data_dir: Path, **extra: str) -> dict[str, str]:
    """The CLI's environment; these tests' repositories are on file:// (an operator allowance)."""
    return {
        "DATABASE_URL": database_url,
        "RUNBOOK_DATA_DIR": str(data_dir),
        "RUNBOOK_SOURCE_ALLOW_FILE": "true",
        **extra,
    }


async def test_add_sync_and_list_a_git_source_from_the_command_line(
    store: Store, database_url: str, unique_tenant: str, tmp_path: Path
) -> None:
    repo = GitRepo(tmp_path / "repo")
    repo.write("runbooks/disk.md", DISK)
    repo.write("runbooks/certs.rst", RST)
    repo.commit("runbooks")
    env = cli_env(database_url, tmp_path / "data", RUNBOOK_PUBLIC_URL="https://bot.example.com/")

    added = runbook(
        "source",
        "add",
        unique_tenant,
        "git",
        repo.url,
        "--path",
        "runbooks",
        "--name",
        "ops",
        "--json",
        env=env,
    )
    synced = runbook("source", "sync", "--tenant", unique_tenant, "--json", env=env)
    listed = runbook("source", "list", "--tenant", unique_tenant, env=env)
    asked = runbook(
        "ask", "--tenant", unique_tenant, "--json", "how do I renew the certificate?", env=env
    )

    assert added.returncode == 0, added.stderr
    source = json.loads(added.stdout)
    assert source["webhook_url"] == f"https://bot.example.com/hooks/git/{source['source_id']}"
    assert len(source["webhook_secret"]) >= 32
    assert synced.returncode == 0, synced.stderr
    result = json.loads(synced.stdout)
    assert result["ok"] is True
    assert result["sources"][0]["report"]["documents"]["added"] == 2
    assert f"{unique_tenant}/ops  git" in listed.stdout
    assert "2 added, 0 changed, 0 unchanged, 0 retired, 0 skipped, 0 failed" in listed.stdout
    head = repo.git("rev-parse", "HEAD").strip()
    assert f"  path runbooks  synced commit {head[:12]}" in listed.stdout
    answer = json.loads(asked.stdout)
    assert answer["status"] == "answered"
    assert answer["citations"][0]["document_id"] == "certs"


async def test_a_path_the_repository_does_not_have_is_refused_and_nothing_is_saved(
    store: Store, database_url: str, unique_tenant: str, tmp_path: Path
) -> None:
    repo = GitRepo(tmp_path / "repo")
    repo.write("runbooks/disk.md", DISK)
    repo.commit("runbooks")
    env = cli_env(database_url, tmp_path / "data")

    typo = runbook(
        "source",
        "add",
        unique_tenant,
        "git",
        repo.url,
        "--path",
        "runbook",
        "--name",
        "ops",
        env=env,
    )
    nested = runbook(
        "source",
        "add",
        unique_tenant,
        "git",
        repo.url,
        "--path",
        "/runbooks/",
        "--name",
        "ok",
        env=env,
    )

    assert typo.returncode == 2
    assert (
        "--path 'runbook' is not a folder of" in typo.stderr and "nothing was saved" in typo.stderr
    )
    assert nested.returncode == 0, nested.stderr
    assert [row.name for row in await list_sources(store, tenant=unique_tenant)] == ["ok"]


async def test_a_failed_sync_exits_1_and_is_listed_with_its_error(
    store: Store, database_url: str, unique_tenant: str, tmp_path: Path
) -> None:
    repo = GitRepo(tmp_path / "repo")
    repo.write("disk.md", DISK)
    repo.commit("one")
    env = cli_env(database_url, tmp_path / "data")
    runbook("source", "add", unique_tenant, "git", repo.url, "--branch", "nope", env=env)

    synced = runbook("source", "sync", "--tenant", unique_tenant, env=env)
    listed = runbook("source", "list", "--tenant", unique_tenant, "--json", env=env)

    assert synced.returncode == 1
    assert "branch 'nope' does not exist" in synced.stderr
    row = json.loads(listed.stdout)["sources"][0]
    assert (row["last_outcome"], row["consecutive_failures"]) == ("failed", 1)


async def test_a_token_is_required_sealed_and_never_printed(
    store: Store, database_url: str, unique_tenant: str, tmp_path: Path
) -> None:
    url = "https://github.com/acme/runbooks.git"
    without_keys = runbook(
        "source",
        "add",
        unique_tenant,
        "git",
        url,
        "--token-env",
        "GH_TOKEN",
        env=cli_env(database_url, tmp_path, GH_TOKEN=credentials.GIT_TOKEN),
    )
    env = cli_env(
        database_url,
        tmp_path,
        GH_TOKEN=credentials.GIT_TOKEN,
        RUNBOOK_ENCRYPTION_KEYS=Fernet.generate_key().decode(),
    )
    added = runbook(
        "source",
        "add",
        unique_tenant,
        "git",
        url,
        *("--branch", "main", "--token-env", "GH_TOKEN", "--json"),
        env=env,
    )
    listed = runbook("source", "list", "--json", env=env)

    assert without_keys.returncode == 2
    assert "RUNBOOK_ENCRYPTION_KEYS" in without_keys.stderr
    assert added.returncode == 0, added.stderr
    for done in (without_keys, added, listed):
        assert credentials.GIT_TOKEN not in done.stdout + done.stderr
    [row] = await list_sources(store, tenant=unique_tenant)
    assert row.credential is not None and set(row.credential) == {"sealed"}
    assert credentials.GIT_TOKEN not in json.dumps(row.credential)
    assert row.name == "runbooks"


async def test_a_git_source_added_without_branch_syncs_the_remotes_default_branch(
    store: Store, database_url: str, unique_tenant: str, tmp_path: Path
) -> None:
    repo = GitRepo(tmp_path / "repo", branch="trunk")
    repo.write("disk.md", DISK)
    repo.commit("one")
    env = cli_env(database_url, tmp_path / "data")

    added = runbook("source", "add", unique_tenant, "git", repo.url, "--json", env=env)
    synced = runbook("source", "sync", "--tenant", unique_tenant, "--json", env=env)

    assert added.returncode == 0, added.stderr
    assert json.loads(added.stdout)["settings"]["branch"] == "trunk"
    assert synced.returncode == 0, synced.stderr
    assert json.loads(synced.stdout)["sources"][0]["report"]["documents"]["added"] == 1


async def test_adding_an_empty_repository_without_branch_says_to_pass_one(
    database_url: str, unique_tenant: str, tmp_path: Path
) -> None:
    repo = GitRepo(tmp_path / "empty")
    env = cli_env(database_url, tmp_path / "data")

    added = runbook("source", "add", unique_tenant, "git", repo.url, env=env)
    listed = runbook("source", "list", "--tenant", unique_tenant, env=env)

    assert added.returncode == 1
    assert "names no default branch" in added.stderr
    assert "pass --branch" in added.stderr
    assert listed.stdout.strip() == "no sources"


async def test_a_password_in_the_url_is_refused(
    database_url: str, unique_tenant: str, tmp_path: Path
) -> None:
    done = runbook(
        "source",
        "add",
        unique_tenant,
        "git",
        f"https://me:{credentials.GIT_TOKEN}@github.com/acme/r.git",
        env=cli_env(database_url, tmp_path),
    )

    assert done.returncode == 2
    assert "--token-env" in done.stderr
    assert credentials.GIT_TOKEN not in done.stdout + done.stderr


async def test_remove_with_prune_retires_the_sources_documents(
    store: Store, database_url: str, unique_tenant: str, tmp_path: Path
) -> None:
    repo = GitRepo(tmp_path / "repo")
    repo.write("disk.md", DISK)
    repo.commit("one")
    env = cli_env(database_url, tmp_path / "data")
    runbook("source", "add", unique_tenant, "git", repo.url, "--name", "ops", env=env)
    runbook("source", "sync", "--tenant", unique_tenant, env=env)

    removed = runbook("source", "remove", unique_tenant, "ops", "--prune", env=env)

    assert removed.returncode == 0, removed.stderr
    assert "1 documents retired" in removed.stdout
    assert await list_sources(store, tenant=unique_tenant) == []
    async with store.pool.connection() as conn:
        cur = await conn.execute(
            "SELECT count(*) FROM documents WHERE tenant_id = %s AND NOT superseded",
            (unique_tenant,),
        )
        assert await cur.fetchone() == (0,)
