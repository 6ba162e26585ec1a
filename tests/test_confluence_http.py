"""What the Confluence client does with answers the shared fake never gives: a redirect, an HTML
login page, a server error, a slow site, a Retry-After date — served by a small site on
127.0.0.1 that records every request it gets."""

from __future__ import annotations

import asyncio
import datetime as dt
import email.utils
import inspect
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field

import aiohttp
import pytest
import pytest_asyncio
from aiohttp import web

from rag.sources.confluence.client import (
    ConfluenceAuth,
    ConfluenceResponseError,
    ConfluenceSpace,
    ConfluenceUnreachableError,
    RetryPolicy,
    list_pages,
)
from rag.sources.confluence.http import ConfluenceConnection
from tests.fakes.loopback import serve_on_loopback
from tests.log_guard import LogGuard

PAT = "test-confluence-pat-7c1e"
Handler = Callable[[web.Request], web.StreamResponse | Awaitable[web.StreamResponse]]
Serve = Callable[[Handler], Awaitable["Site"]]


@dataclass
class Site:
    """A one-route site: ``answer`` decides each response; ``seen`` holds what came in."""

    answer: Handler
    seen: list[web.Request] = field(default_factory=list)
    url: str = ""

    async def handle(self, request: web.Request) -> web.StreamResponse:
        self.seen.append(request)
        response = self.answer(request)
        return await response if inspect.isawaitable(response) else response


@pytest_asyncio.fixture
async def serve() -> AsyncIterator[Serve]:
    runners: list[web.AppRunner] = []

    async def start(answer: Handler) -> Site:
        site = Site(answer)
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", site.handle)
        runner, port = await serve_on_loopback(app)
        runners.append(runner)
        site.url = f"http://127.0.0.1:{port}"
        return site

    try:
        yield start
    finally:
        for runner in runners:
            await runner.cleanup()


@pytest.fixture(autouse=True)
def no_credentials_in_logs(log_guard: LogGuard) -> None:
    log_guard.forbid_secret(PAT)


def data_center(site: Site) -> ConfluenceSpace:
    return ConfluenceSpace(site.url, "OPS", None, ConfluenceAuth.data_center(PAT))


async def test_a_redirect_is_refused_and_the_credential_never_reaches_its_target(
    serve: Serve,
) -> None:
    elsewhere = await serve(lambda request: web.json_response({}))
    redirecting = await serve(
        lambda request: web.Response(status=302, headers={"Location": f"{elsewhere.url}/login?t=x"})
    )
    async with aiohttp.ClientSession() as session:
        with pytest.raises(ConfluenceResponseError, match="redirected to") as caught:
            await list_pages(session, data_center(redirecting))
    assert f"{elsewhere.url}/login" in str(caught.value) and "t=x" not in str(caught.value)
    assert caught.value.status == 302
    assert elsewhere.seen == []
    assert redirecting.seen[0].headers["Authorization"] == f"Bearer {PAT}"


async def test_an_html_login_page_instead_of_json_asks_whether_the_base_url_is_right(
    serve: Serve,
) -> None:
    site = await serve(
        lambda request: web.Response(text="<html>Log in</html>", content_type="text/html")
    )
    async with aiohttp.ClientSession() as session:
        with pytest.raises(ConfluenceResponseError, match="is the base URL right"):
            await list_pages(session, data_center(site))


async def test_a_server_error_says_its_status_but_never_the_body_and_is_not_retried(
    serve: Serve,
) -> None:
    # An internal service reached by mistake answers with what it holds: the error becomes the
    # source's last_error, which every user of the tenant sees, so no byte of the body is kept.
    site = await serve(
        lambda request: web.json_response(
            {"statusCode": 500, "message": "db_password=hunter2 Index is being rebuilt"},
            status=500,
        )
    )
    async with aiohttp.ClientSession() as session:
        with pytest.raises(ConfluenceResponseError, match="HTTP 500") as caught:
            await list_pages(session, data_center(site))
    assert "hunter2" not in str(caught.value) and "rebuilt" not in str(caught.value)
    assert caught.value.status == 500
    assert len(site.seen) == 1


async def test_a_site_slower_than_the_timeout_is_unreachable_after_one_retry(
    serve: Serve,
) -> None:
    async def slow(request: web.Request) -> web.Response:
        await asyncio.sleep(2)
        return web.json_response({})

    site = await serve(slow)
    async with aiohttp.ClientSession() as session:
        connection = ConfluenceConnection(
            session,
            data_center(site),
            timeout=aiohttp.ClientTimeout(total=0.2),
            retry=RetryPolicy(transport_wait_s=0.01),
        )
        with pytest.raises(ConfluenceUnreachableError, match="timed out reading the space"):
            await connection.get(f"{site.url}/rest/api/space/OPS", subject="the space")
    assert len(site.seen) == 2


async def test_a_retry_after_date_is_waited_for_before_asking_again(
    serve: Serve,
) -> None:
    def throttle_once(request: web.Request) -> web.Response:
        if len(site.seen) > 1:
            return web.json_response({"key": "OPS"})
        when = dt.datetime.now(dt.UTC) + dt.timedelta(seconds=2)
        return web.json_response(
            {"message": "slow down"},
            status=429,
            headers={"Retry-After": email.utils.format_datetime(when, usegmt=True)},
        )

    site = await serve(throttle_once)
    async with aiohttp.ClientSession() as session:
        connection = ConfluenceConnection(session, data_center(site))
        loop = asyncio.get_running_loop()
        started = loop.time()
        answer = await connection.get(f"{site.url}/rest/api/space/OPS", subject="the space")
        waited = loop.time() - started
    assert answer == {"key": "OPS"} and len(site.seen) == 2
    # An HTTP date has whole seconds: at least one of the two is left when it is read.
    assert waited >= 0.9, waited


async def test_an_answer_over_the_size_cap_is_refused_unread(serve: Serve) -> None:
    site = await serve(lambda request: web.json_response({"results": ["x" * 400_000]}))
    async with aiohttp.ClientSession() as session:
        connection = ConfluenceConnection(session, data_center(site), max_answer_bytes=300_000)
        with pytest.raises(ConfluenceResponseError, match="over 300000 bytes"):
            await connection.get(f"{site.url}/rest/api/content", subject="pages")
        roomy = ConfluenceConnection(session, data_center(site), max_answer_bytes=500_000)
        answer = await roomy.get(f"{site.url}/rest/api/content", subject="pages")
    assert len(answer["results"][0]) == 400_000
