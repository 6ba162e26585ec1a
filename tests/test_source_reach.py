"""Sources reach public https addresses only (issue 36): ``source add`` refuses loopback,
link-local, private, internal-name and plain-http URLs naming the setting that allows them;
a stored source whose address is (or became) internal is refused at connect time, before any
request; an error keeps its kind and status, never the body of the answer."""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from aiohttp import web
from cryptography.fernet import Fernet

from bot.core.sources.runs import run_sync
from rag import (
    ALLOW_PRIVATE_SETTING,
    FastEmbedder,
    Settings,
    SourceAccess,
    SourceRow,
    SourceSyncError,
    Store,
    add_source,
    get_source,
    git_target,
)
from tests.fakes.loopback import serve_on_loopback
from tests.git_repos import local_sources
from tests.test_slack_cli import runbook

REFUSED_URLS = [
    "https://127.0.0.1/wiki",
    "https://169.254.169.254/latest/meta-data",
    "https://10.1.2.3/wiki",
    "https://172.20.0.9/wiki",
    "https://192.168.1.20/wiki",
    "https://[fd00::5]/wiki",
    "https://[::1]/wiki",
    "https://[::ffff:127.0.0.1]/wiki",
    "https://localhost/wiki",
    "https://confluence/wiki",
    "https://wiki.corp.internal/wiki",
    "http://confluence.example.com/wiki",
]


@pytest.mark.parametrize("url", REFUSED_URLS)
def test_a_non_public_or_plain_http_url_is_refused_for_confluence_and_git(url: str) -> None:
    strict = SourceAccess()
    with pytest.raises(SourceSyncError) as confluence:
        strict.check_http_url("ops", url)
    with pytest.raises(SourceSyncError) as git:
        git_target("ops", url.removesuffix("/wiki") + "/acme/runbooks.git", strict)
    for refused in (confluence.value, git.value):
        assert refused.code == "source_address_refused"
        assert ALLOW_PRIVATE_SETTING in str(refused) or "sources never reach" in str(refused)


@pytest.mark.parametrize("url", ["ssh://git@10.0.0.7/acme/r.git", "git@127.0.0.1:acme/r.git"])
def test_an_ssh_url_to_a_private_host_is_refused(url: str) -> None:
    with pytest.raises(SourceSyncError, match=ALLOW_PRIVATE_SETTING):
        git_target("ops", url, SourceAccess())


def test_the_setting_allows_private_addresses_and_plain_http_to_them_but_not_link_local() -> None:
    allowing = SourceAccess(allow_private_networks=True)
    allowing.check_http_url("ops", "http://127.0.0.1:8090/wiki")
    allowing.check_http_url("ops", "https://10.1.2.3/wiki")
    target = git_target("ops", "http://[::1]:8080/acme/r.git", allowing)
    assert target.protocol == "http" and target.origin == "http://[::1]:8080/"
    with pytest.raises(SourceSyncError, match="link-local"):
        allowing.check_http_url("ops", "https://169.254.169.254/latest/meta-data")
    assert allowing.address_refusal("93.184.215.14", plain_http=True) is not None
    # The metadata service however an IPv6 address wraps it (mapped, 6to4, NAT64).
    for wrapped in ("::ffff:169.254.169.254", "2002:a9fe:a9fe::1", "64:ff9b::a9fe:a9fe"):
        assert "link-local" in str(allowing.address_refusal(wrapped))
    assert SourceAccess().address_refusal("93.184.215.14") is None


def test_a_public_git_host_is_pinned_to_the_address_checked_and_follows_no_redirect() -> None:
    target = git_target("ops", "https://8.8.8.8/acme/runbooks.git", SourceAccess())
    assert target.protocol == "https"
    assert ("http.followRedirects", "false") in target.config


def test_a_git_host_name_is_pinned_to_the_addresses_it_was_checked_at() -> None:
    # git resolves names itself: without the pin, a DNS answer changed between the check and
    # the fetch would take it elsewhere.
    allowing = SourceAccess(allow_private_networks=True)
    https = git_target("ops", "http://localhost:8080/acme/runbooks.git", allowing)
    pinned = dict(https.config)["http.curloptResolve"]
    assert pinned.startswith("localhost:8080:")
    assert "127.0.0.1" in pinned or "[::1]" in pinned
    ssh = git_target("ops", "ssh://git@localhost/acme/runbooks.git", allowing)
    assert ssh.ssh_address in ("127.0.0.1", "::1")


def cli_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    return {"RUNBOOK_DATA_DIR": str(tmp_path / "data"), "DATABASE_URL": "", **extra}


@pytest.mark.parametrize(
    "args",
    [
        ("confluence", "https://169.254.169.254/wiki", "--space", "OPS", "--pat-env", "PAT"),
        ("confluence", "http://127.0.0.1:8090/wiki", "--space", "OPS", "--pat-env", "PAT"),
        ("git", "https://[::1]/acme/runbooks.git", "--branch", "main"),
        ("git", "http://192.168.4.4/acme/runbooks.git", "--branch", "main"),
        ("git", "https://localhost/acme/runbooks.git", "--branch", "main"),
    ],
)
def test_source_add_refuses_an_internal_url_naming_the_setting(
    args: tuple[str, ...], tmp_path: Path
) -> None:
    done = runbook("source", "add", "acme", *args, env=cli_env(tmp_path, PAT="kestrel-dc-pat"))

    assert done.returncode != 0
    assert "refused" in done.stderr
    if "169.254" in args[1]:
        assert "link-local" in done.stderr
    else:
        assert ALLOW_PRIVATE_SETTING in done.stderr
    assert "kestrel-dc-pat" not in done.stdout + done.stderr


async def test_with_the_setting_the_loopback_confluence_is_added_as_before(
    store: Store, database_url: str, unique_tenant: str, tmp_path: Path
) -> None:
    env = cli_env(
        tmp_path,
        DATABASE_URL=database_url,
        PAT="kestrel-dc-pat",
        RUNBOOK_ENCRYPTION_KEYS=Fernet.generate_key().decode(),
        **{ALLOW_PRIVATE_SETTING: "true"},
    )
    done = runbook(
        "source", "add", unique_tenant, "confluence", "http://127.0.0.1:8090/wiki",
        "--space", "OPS", "--pat-env", "PAT", "--json", env=env,
    )  # fmt: skip

    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["settings"]["base_url"] == "http://127.0.0.1:8090/wiki"


Answer = Callable[[web.Request], web.Response]


@pytest_asyncio.fixture
async def listener() -> AsyncIterator[Callable[[Answer], Any]]:
    """Sites on 127.0.0.1 that record every request they get."""
    runners: list[web.AppRunner] = []

    async def start(answer: Answer) -> tuple[str, list[web.Request]]:
        seen: list[web.Request] = []

        async def handle(request: web.Request) -> web.Response:
            seen.append(request)
            return answer(request)

        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", handle)
        runner, port = await serve_on_loopback(app)
        runners.append(runner)
        return f"127.0.0.1:{port}", seen

    try:
        yield start
    finally:
        for runner in runners:
            await runner.cleanup()


async def stored_source(
    store: Store, tenant: str, kind: str, settings: dict[str, Any]
) -> SourceRow:
    """A row as ``add`` stored it when its name still resolved to a public address."""
    credential = {"pat": "kestrel-dc-pat"} if kind == "confluence" else None
    return await add_source(
        store,
        tenant=tenant,
        name=f"{kind}-{uuid.uuid4().hex[:6]}",
        kind=kind,
        settings=settings,
        credential=credential,
        webhook_secret={"secret": "s"},
    )


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost"])
async def test_a_stored_confluence_source_now_internal_is_refused_before_any_request(
    store: Store,
    embedder: FastEmbedder,
    settings: Settings,
    unique_tenant: str,
    listener: Callable[[Answer], Any],
    host: str,
) -> None:
    site, seen = await listener(lambda request: web.json_response({}))
    port = site.rsplit(":", 1)[1]
    row = await stored_source(
        store, unique_tenant, "confluence", {"base_url": f"https://{host}:{port}", "space": "OPS"}
    )

    outcome = await run_sync(store, embedder, row, settings=settings, cipher=None)

    assert not outcome.synced and outcome.error_code == "source_address_refused"
    assert outcome.error is not None and ALLOW_PRIVATE_SETTING in outcome.error
    assert seen == []
    stored = await get_source(store, row.source_id)
    assert stored is not None and stored.last_error is not None
    assert ALLOW_PRIVATE_SETTING in stored.last_error


async def test_a_stored_git_source_now_internal_is_refused_before_git_connects(
    store: Store,
    embedder: FastEmbedder,
    settings: Settings,
    unique_tenant: str,
    listener: Callable[[Answer], Any],
) -> None:
    site, seen = await listener(lambda request: web.Response(status=404))
    row = await stored_source(
        store, unique_tenant, "git", {"url": f"https://{site}/acme/runbooks.git", "branch": "main"}
    )

    outcome = await run_sync(store, embedder, row, settings=settings, cipher=None)

    assert not outcome.synced and outcome.error_code == "source_address_refused"
    assert outcome.error is not None and ALLOW_PRIVATE_SETTING in outcome.error
    assert seen == []


async def test_an_internal_services_error_body_never_reaches_last_error(
    store: Store,
    embedder: FastEmbedder,
    settings: Settings,
    unique_tenant: str,
    listener: Callable[[Answer], Any],
) -> None:
    # A Data Center source aimed (with the operator's allowance) at a service that is not
    # Confluence: its 500 page names a password, and last_error is shown to the whole tenant.
    site, seen = await listener(
        lambda request: web.Response(status=500, text="db_password=hunter2 at db.internal:5432")
    )
    row = await stored_source(
        store, unique_tenant, "confluence", {"base_url": f"http://{site}", "space": "OPS"}
    )

    outcome = await run_sync(store, embedder, row, settings=local_sources(settings), cipher=None)

    assert seen, "the allowance lets the sync reach the loopback service"
    stored = await get_source(store, row.source_id)
    assert stored is not None and stored.last_error is not None
    assert "HTTP 500" in stored.last_error
    assert "hunter2" not in stored.last_error and "db.internal" not in stored.last_error
    assert outcome.error is not None and "hunter2" not in outcome.error
