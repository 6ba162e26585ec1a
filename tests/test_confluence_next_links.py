"""Cloud's ``_links.next`` is followed only on the site's own origin (issue 36): a link to
another port or host never receives the credential, and a malformed one is a recorded error
of the source, never a ``ValueError``.

The site listens on port 80 of an address of 127.0.0.0/8 of its own, so a base URL without a
port is what a user gives (``:8443/…`` pasted onto it once reached another port).
"""

from __future__ import annotations

import random
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import pytest
import pytest_asyncio
from aiohttp import web

from bot.core.sources.runs import run_sync
from rag import (
    ConfluenceReader,
    FastEmbedder,
    Settings,
    Store,
    add_source,
    confluence_reader,
    get_source,
)
from rag.errors import ConfluenceResponseError
from tests.git_repos import LOCAL_SOURCES, local_sources
from tests.log_guard import LogGuard

EMAIL = "oncall-bot@kestrel.example"
TOKEN = "next-link-test-token-5d2a"


@dataclass
class Listener:
    """A site that records every request and the ``Authorization`` header it came with."""

    host: str
    port: int = 0
    seen: list[tuple[str, str]] = field(default_factory=list)

    def record(self, request: web.Request) -> None:
        self.seen.append((request.path_qs, request.headers.get("Authorization", "")))


@dataclass
class CloudSite:
    site: Listener
    other: Listener
    next_link: str = ""

    @property
    def base_url(self) -> str:
        return f"http://{self.site.host}/wiki"

    def app(self) -> web.Application:
        async def spaces(request: web.Request) -> web.Response:
            self.site.record(request)
            return web.json_response({"results": [{"id": "1", "key": "OPS"}]})

        async def pages(request: web.Request) -> web.Response:
            self.site.record(request)
            page = {"status": "current", "version": {"number": 1}}
            if request.query.get("cursor") == "2":
                return web.json_response({"results": [{"id": "12", **page}]})
            return web.json_response(
                {"results": [{"id": "11", **page}], "_links": {"next": self.next_link}}
            )

        app = web.Application()
        app.router.add_get("/wiki/api/v2/spaces", spaces)
        app.router.add_get("/wiki/api/v2/spaces/1/pages", pages)
        return app


def other_app(listener: Listener) -> web.Application:
    async def anything(request: web.Request) -> web.Response:
        listener.record(request)
        return web.json_response({"results": []})

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", anything)
    return app


@pytest_asyncio.fixture
async def cloud() -> AsyncIterator[CloudSite]:
    host = f"127.{random.randint(1, 254)}.{random.randint(1, 254)}.{random.randint(2, 254)}"
    site = CloudSite(Listener(host, 80), Listener(host))
    runners = [
        web.AppRunner(site.app(), access_log=None, shutdown_timeout=1.0),
        web.AppRunner(other_app(site.other), access_log=None, shutdown_timeout=1.0),
    ]
    try:
        for runner in runners:
            await runner.setup()
        try:
            await web.TCPSite(runners[0], host, 80).start()
        except OSError as exc:
            pytest.skip(f"cannot listen on {host}:80 ({exc})")
        await web.TCPSite(runners[1], host, 0).start()
        site.other.port = int(runners[1].addresses[0][1])
        yield site
    finally:
        for runner in runners:
            await runner.cleanup()


@pytest.fixture(autouse=True)
def no_token_in_logs(log_guard: LogGuard) -> None:
    log_guard.forbid_secret(TOKEN)


def reader(cloud: CloudSite) -> ConfluenceReader:
    return confluence_reader(
        "acme/ops",
        {"base_url": cloud.base_url, "space": "OPS", "email": EMAIL},
        {"token": TOKEN},
        max_page_bytes=100_000,
        access=LOCAL_SOURCES,
    )


def off_site_links(cloud: CloudSite) -> list[str]:
    port, host = cloud.other.port, cloud.site.host
    path = "/wiki/api/v2/spaces/1/pages?cursor=2"
    return [
        f":{port}{path}",
        f".evil.example{path}",
        f"@{host}:{port}{path}",
        f"//{host}:{port}{path}",
        f"http://{host}:{port}{path}",
        f"https://{host}{path}",
        "http://[::1",
    ]


async def test_a_next_link_on_the_sites_own_origin_is_followed(cloud: CloudSite) -> None:
    cloud.next_link = "/wiki/api/v2/spaces/1/pages?limit=250&cursor=2"

    listing = await reader(cloud).list_items()

    assert sorted(listing.items) == ["11", "12"]
    assert cloud.other.seen == []


async def test_no_off_site_next_link_is_followed_or_escapes_as_a_value_error(
    cloud: CloudSite,
) -> None:
    for link in off_site_links(cloud):
        cloud.next_link = link
        with pytest.raises(ConfluenceResponseError, match="next-page link") as raised:
            await reader(cloud).list_items()
        assert TOKEN not in str(raised.value)
    assert cloud.other.seen == []


async def test_a_next_link_to_another_port_is_a_recorded_failure_and_gets_no_credential(
    store: Store,
    embedder: FastEmbedder,
    settings: Settings,
    unique_tenant: str,
    cloud: CloudSite,
) -> None:
    cloud.next_link = f":{cloud.other.port}/wiki/api/v2/spaces/1/pages?cursor=2"
    row = await add_source(
        store,
        tenant=unique_tenant,
        name=f"ops-{uuid.uuid4().hex[:6]}",
        kind="confluence",
        settings={"base_url": cloud.base_url, "space": "OPS", "email": EMAIL},
        credential={"token": TOKEN},
        webhook_secret={"secret": "s"},
    )

    outcome = await run_sync(store, embedder, row, settings=local_sources(settings), cipher=None)

    assert not outcome.synced and outcome.error_code == "confluence_bad_response"
    stored = await get_source(store, row.source_id)
    assert stored is not None and stored.last_error is not None
    assert "next-page link" in stored.last_error
    assert cloud.other.seen == []
    assert all(auth.startswith("Basic ") for _, auth in cloud.site.seen)
