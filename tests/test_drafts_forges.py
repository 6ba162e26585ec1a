"""A reviewed draft delivered to GitHub and GitLab (fake forges on real repositories): one
branch and one pull / merge request however often it is sent, through rate limits and 5xx; a
read-only token is refused clearly; a section appended to an existing runbook."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import aiohttp
import pytest
import pytest_asyncio
from aiohttp import web

from bot.core.drafts.change import Delivered, Submission
from bot.core.drafts.deliver import NoWritableSource, deliver
from bot.core.drafts.forge_http import DeliveryError, ForgeHttp, request_ok
from bot.core.sources.runs import run_sync
from rag import FastEmbedder, Settings, SourceAccess, SourceRow, Store, add_source
from tests.fakes.forge import READ_ONLY_TOKEN, TOKEN, FakeForge
from tests.git_repos import local_sources

pytestmark = pytest.mark.usefixtures("allow_local_sources")

MARKDOWN = (
    '---\ntitle: "KafkaBrokerDiskUsageHigh"\n---\n\n'
    "# KafkaBrokerDiskUsageHigh\n\n## Mitigation\n\n1. x\n"
)


@pytest.fixture
def allow_local_sources(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RUNBOOK_SOURCE_ALLOW_FILE", "true")
    monkeypatch.setenv("RUNBOOK_SOURCE_ALLOW_PRIVATE_NETWORKS", "true")


@pytest_asyncio.fixture
async def forge(tmp_path: Path) -> AsyncIterator[FakeForge]:
    async with FakeForge(tmp_path / "forge") as fake:
        yield fake


async def forge_source(
    store: Store, tenant: str, forge: FakeForge, kind: str, *, token: str = TOKEN, path: str = ""
) -> SourceRow:
    repo = forge.repo("acme/runbooks")
    api = f"{forge.url}/api/v3" if kind == "github" else f"{forge.url}/api/v4"
    settings = {"url": repo.url, "branch": "main", "path": path, "forge": kind, "api_url": api}
    return await add_source(
        store,
        tenant=tenant,
        name="runbooks",
        kind="git",
        settings=settings,
        credential={"token": token},
        webhook_secret={"secret": "s"},
    )


def submission(
    tenant: str, destination: str = "new", draft_id: str = "d-0123456789ab"
) -> Submission:
    return Submission(
        tenant=tenant,
        draft_id=draft_id,
        title="KafkaBrokerDiskUsageHigh",
        markdown=MARKDOWN,
        section="## KafkaBrokerDiskUsageHigh\n\n### Mitigation\n\n1. x\n",
        destination=destination,
        thread_link="https://acme.slack.com/archives/C_INC/p1700000000000100",
        asked_by="Priya Raman (U_PRIYA)",
        redactions=1,
    )


async def send(
    store: Store, sub: Submission, *, access: SourceAccess | None = None
) -> tuple[Delivered, str | None]:
    # The fakes listen on 127.0.0.1, which only the private-network allowance reaches.
    access = access or SourceAccess(allow_private_networks=True)
    return await deliver(store, sub, access=access, cipher=None, sleep_cap_s=0.05)


@pytest.mark.parametrize("kind", ["github", "gitlab"])
async def test_a_draft_becomes_one_branch_one_commit_and_one_request_for_review(
    store: Store, forge: FakeForge, unique_tenant: str, kind: str
) -> None:
    await forge_source(store, unique_tenant, forge, kind, path="runbooks")
    delivered, document = await send(store, submission(unique_tenant))

    [pull] = forge.pulls
    assert (pull.kind, pull.head, pull.base, pull.state) == (
        kind,
        "runbook-draft/d-0123456789ab",
        "main",
        "open",
    )
    assert forge.changed_files(pull) == {"runbooks/KafkaBrokerDiskUsageHigh.md": MARKDOWN}
    assert "archives/C_INC/p1700000000000100" in pull.body and "Priya Raman" in pull.body
    assert document == "KafkaBrokerDiskUsageHigh"
    expected = f"/pull/{pull.number}" if kind == "github" else f"/-/merge_requests/{pull.number}"
    assert delivered.link.endswith(expected)


@pytest.mark.parametrize("kind", ["github", "gitlab"])
async def test_a_second_submit_finds_the_first_request_instead_of_opening_another(
    store: Store, forge: FakeForge, unique_tenant: str, kind: str
) -> None:
    await forge_source(store, unique_tenant, forge, kind)
    first, _ = await send(store, submission(unique_tenant))
    again, _ = await send(store, submission(unique_tenant))

    assert len(forge.pulls) == 1
    assert first.created and not again.created
    assert again.link == first.link
    commits = forge.repo("acme/runbooks").git(
        "rev-list", "--count", "refs/heads/runbook-draft/d-0123456789ab"
    )
    assert commits == "2"  # the seed and the one draft commit


@pytest.mark.parametrize("kind", ["github", "gitlab"])
async def test_rate_limits_and_server_errors_are_retried_into_one_request(
    store: Store, forge: FakeForge, unique_tenant: str, kind: str
) -> None:
    await forge_source(store, unique_tenant, forge, kind)
    api = "/api/v3/repos/acme/runbooks" if kind == "github" else "/api/v4/projects/acme%2Frunbooks"
    forge.fail(api, 429, times=2)
    forge.fail(api, 502, times=1)
    forge.fail(api + ("/pulls" if kind == "github" else "/merge_requests"), 503, times=2)

    await send(store, submission(unique_tenant))

    assert len(forge.pulls) == 1
    assert sorted({status for _, _, status in forge.requests} & {429, 502, 503}) == [429, 502, 503]


@pytest.mark.parametrize("kind", ["github", "gitlab"])
async def test_a_read_only_token_is_refused_clearly_and_writes_nothing(
    store: Store, forge: FakeForge, unique_tenant: str, kind: str
) -> None:
    await forge_source(store, unique_tenant, forge, kind, token=READ_ONLY_TOKEN)
    with pytest.raises(DeliveryError) as refused:
        await send(store, submission(unique_tenant))
    assert refused.value.code == "read_only"
    assert "read" in refused.value.message and "not push" in refused.value.message
    assert forge.pulls == []
    assert forge.repo("acme/runbooks").sha("runbook-draft/d-0123456789ab") is None


@pytest.mark.parametrize("kind", ["github", "gitlab"])
async def test_a_section_is_appended_to_the_nearest_existing_runbook(
    store: Store,
    embedder: FastEmbedder,
    settings: Settings,
    forge: FakeForge,
    unique_tenant: str,
    kind: str,
) -> None:
    row = await forge_source(store, unique_tenant, forge, kind, path="runbooks")
    outcome = await run_sync(store, embedder, row, settings=local_sources(settings), cipher=None)
    assert outcome.synced

    await send(store, submission(unique_tenant, destination="README"))

    [pull] = forge.pulls
    changed = forge.changed_files(pull)
    assert list(changed) == ["runbooks/README.md"]
    assert changed["runbooks/README.md"].startswith("# Runbooks\n\nOur runbooks live here.\n\n")
    assert changed["runbooks/README.md"].endswith(
        "## KafkaBrokerDiskUsageHigh\n\n### Mitigation\n\n1. x\n"
    )


async def test_without_a_writable_source_the_surface_is_told_to_post_a_file(
    store: Store, unique_tenant: str
) -> None:
    with pytest.raises(NoWritableSource):
        await send(store, submission(unique_tenant))


@pytest.mark.parametrize("kind", ["github", "gitlab"])
async def test_a_forge_on_a_private_address_is_refused_at_delivery_without_the_allowance(
    store: Store, forge: FakeForge, unique_tenant: str, kind: str
) -> None:
    # Added while the operator allowed private networks; delivered after the allowance is gone
    # (or the name now resolves inside): the rule holds at every connection, not only at add.
    await forge_source(store, unique_tenant, forge, kind)
    with pytest.raises(DeliveryError) as refused:
        await send(store, submission(unique_tenant), access=SourceAccess())
    assert refused.value.code == "refused"
    assert "127.0.0.1 is a loopback address" in refused.value.message
    assert forge.requests == [] and forge.pulls == []


async def test_a_redirect_is_answered_not_followed_so_the_token_stays_with_its_forge() -> None:
    elsewhere: list[str] = []

    async def moved(request: web.Request) -> web.Response:
        raise web.HTTPMovedPermanently(f"{other_url}/steal")

    async def steal(request: web.Request) -> web.Response:
        elsewhere.append(request.headers.get("PRIVATE-TOKEN", ""))
        return web.json_response({})

    async with (
        serving(web.get("/steal", steal)) as other_url,
        serving(web.get("/api/v4/projects/acme%2Frunbooks", moved)) as forge_url,
    ):
        async with aiohttp.ClientSession() as session:
            http = ForgeHttp(session, f"{forge_url}/api/v4", {"PRIVATE-TOKEN": TOKEN})
            with pytest.raises(DeliveryError) as refused:
                await request_ok(
                    http, "GET", "projects/acme%2Frunbooks", forge="GitLab", read_only="ro"
                )
    assert refused.value.code == "refused" and "HTTP 301" in refused.value.message
    assert elsewhere == []


@asynccontextmanager
async def serving(route: web.RouteDef) -> AsyncIterator[str]:
    app = web.Application()
    app.add_routes([route])
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    try:
        port = runner.addresses[0][1]
        yield f"http://127.0.0.1:{port}"
    finally:
        await runner.cleanup()
