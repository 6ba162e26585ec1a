"""Where a git source may reach (issue 36): ``file://`` only with the operator's allowance and
never into the bot's data directory (another tenant's cache); no redirect carries the token
to another host; no URL is read as an option; the credential never shows in a ``repr``."""

from __future__ import annotations

import base64
import os
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from aiohttp import web

from bot.core.sources.runs import run_sync
from rag import (
    ALLOW_FILE_SETTING,
    FastEmbedder,
    GitCredential,
    GitReader,
    GitSourceSettings,
    Settings,
    SourceAccess,
    SourceRow,
    SourceSyncError,
    Store,
    add_source,
    get_source,
)
from tests.fakes.loopback import serve_on_loopback
from tests.git_repos import LOCAL_SOURCES, GitRepo, local_sources
from tests.test_slack_cli import runbook

DISK = "# Disk full\n\n## Mitigation\nDelete old WAL segments only after a verified backup.\n"
TOKEN = "git-reach-test-token-91fe"


async def git_row(store: Store, tenant: str, url: str) -> SourceRow:
    return await add_source(
        store,
        tenant=tenant,
        name=f"runbooks-{uuid.uuid4().hex[:6]}",
        kind="git",
        settings={"url": url, "branch": "main"},
        credential=None,
        webhook_secret={"secret": "s"},
    )


async def test_a_file_source_is_refused_without_the_operator_setting(
    store: Store, embedder: FastEmbedder, settings: Settings, unique_tenant: str, tmp_path: Path
) -> None:
    repo = GitRepo(tmp_path / "repo")
    repo.write("disk.md", DISK)
    repo.commit("one")
    row = await git_row(store, unique_tenant, repo.url)

    outcome = await run_sync(store, embedder, row, settings=settings, cipher=None)
    added = runbook(
        "source", "add", unique_tenant, "git", repo.url, "--branch", "main",
        env={"RUNBOOK_DATA_DIR": str(tmp_path / "data")},
    )  # fmt: skip

    assert not outcome.synced and outcome.error_code == "source_address_refused"
    assert outcome.error is not None and ALLOW_FILE_SETTING in outcome.error
    assert added.returncode != 0 and ALLOW_FILE_SETTING in added.stderr


async def test_a_file_source_never_reads_the_data_directory_even_when_allowed(
    store: Store, embedder: FastEmbedder, settings: Settings, unique_tenant: str, tmp_path: Path
) -> None:
    allowing = local_sources(settings)
    repo = GitRepo(tmp_path / "repo")
    repo.write("secret-rotation.md", "# Secret rotation\n\n## Steps\nRotate the vault root.\n")
    repo.commit("one")
    first = await git_row(store, unique_tenant, repo.url)
    assert (await run_sync(store, embedder, first, settings=allowing, cipher=None)).synced
    cache = settings.data_dir / "sources" / str(first.source_id)
    assert (cache / "HEAD").exists()
    link = tmp_path / "innocent-looking"
    link.symlink_to(cache)

    other_tenant = f"{unique_tenant}-other"
    for url in (cache.as_uri(), f"{settings.data_dir.as_uri()}/sources/../sources/{cache.name}",
                link.as_uri()):  # fmt: skip
        row = await git_row(store, other_tenant, url)
        outcome = await run_sync(store, embedder, row, settings=allowing, cipher=None)
        assert not outcome.synced and outcome.error_code == "source_address_refused", url
        assert outcome.error is not None and "data directory" in outcome.error
        stored = await get_source(store, row.source_id)
        assert stored is not None and stored.last_report is None


def test_a_url_or_scp_user_starting_with_a_dash_is_refused() -> None:
    for url in ("-oProxyCommand=touch /tmp/pwned", "-u@host:acme/r.git", "--upload-pack=x"):
        with pytest.raises(ValueError, match="git URL|must be"):
            GitSourceSettings(url=url)


def test_the_git_credential_repr_hides_the_token_and_the_key() -> None:
    key = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n"
    for credential in (GitCredential(token=TOKEN), GitCredential(ssh_key=key)):
        shown = repr(credential) + str(credential) + f"{credential!r}"
        assert TOKEN not in shown and "b3BlbnNzaC1rZXkt" not in shown
        assert "hidden" in shown


@pytest_asyncio.fixture
async def redirecting() -> AsyncIterator[tuple[str, list[tuple[str, str]], list[tuple[str, str]]]]:
    """A git host on 127.0.0.1 that redirects every request to a second one on another port."""
    first_seen: list[tuple[str, str]] = []
    second_seen: list[tuple[str, str]] = []

    async def elsewhere(request: web.Request) -> web.Response:
        second_seen.append((request.path_qs, request.headers.get("Authorization", "")))
        return web.Response(status=404)

    second = web.Application()
    second.router.add_route("*", "/{tail:.*}", elsewhere)
    second_runner, second_port = await serve_on_loopback(second)

    async def redirect(request: web.Request) -> web.Response:
        first_seen.append((request.path_qs, request.headers.get("Authorization", "")))
        raise web.HTTPFound(f"http://127.0.0.1:{second_port}{request.path_qs}")

    first = web.Application()
    first.router.add_route("*", "/{tail:.*}", redirect)
    first_runner, first_port = await serve_on_loopback(first)
    try:
        yield f"http://127.0.0.1:{first_port}/acme/runbooks.git", first_seen, second_seen
    finally:
        await first_runner.cleanup()
        await second_runner.cleanup()


async def test_a_redirect_is_not_followed_and_the_token_never_reaches_the_other_host(
    redirecting: tuple[str, list[tuple[str, str]], list[tuple[str, str]]], tmp_path: Path
) -> None:
    url, first_seen, second_seen = redirecting
    reader = GitReader(
        name="acme/ops",
        settings=GitSourceSettings(url=url),
        credential=GitCredential(token=TOKEN),
        cache_dir=tmp_path / "cache",
        max_file_bytes=100_000,
        access=LOCAL_SOURCES,
    )

    with pytest.raises(SourceSyncError, match="redirect") as raised:
        await reader.list_items()

    basic = base64.b64encode(f"x-access-token:{TOKEN}".encode()).decode()
    assert first_seen and first_seen[0][1] == f"Basic {basic}"
    assert second_seen == []
    assert TOKEN not in str(raised.value)


def test_the_default_access_allows_no_file_source_at_all(tmp_path: Path) -> None:
    with pytest.raises(SourceSyncError, match=ALLOW_FILE_SETTING):
        SourceAccess().check_file_url("ops", tmp_path.as_uri())
    allowed = SourceAccess(allow_file=True, data_dir=tmp_path / "data")
    assert allowed.check_file_url("ops", (tmp_path / "repo").as_uri()) == tmp_path / "repo"
    os.makedirs(tmp_path / "data" / "sources", exist_ok=True)
    with pytest.raises(SourceSyncError, match="data directory"):
        allowed.check_file_url("ops", (tmp_path / "data" / "sources").as_uri())
