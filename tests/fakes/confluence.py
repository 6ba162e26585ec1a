"""The shared fake Confluence (``../shared/probes/confluence_fake.py``) as a test subprocess, with
its control API (edit, add and trash pages; inject throttling) and the spaces it serves."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web

from rag.sources.confluence.client import ConfluenceAuth, ConfluenceSpace
from tests.fakes.loopback import serve_on_loopback

# RUNBOOK_CONFLUENCE_FAKE points elsewhere (a worktree is one folder deeper than the repo).
FAKE = Path(
    os.environ.get("RUNBOOK_CONFLUENCE_FAKE")
    or Path(__file__).resolve().parents[3] / "shared" / "probes" / "confluence_fake.py"
)
# The fake's default credentials (its docstring); the log guard forbids each of them.
EMAIL = "oncall-bot@kestrel.example"
API_TOKEN = "kestrel-cloud-token"
PAT = "kestrel-dc-pat"
SECRETS = (API_TOKEN, PAT)
RUNBOOKS_PAGE = "4325393"
# Ports this suite may serve fakes on (RUNBOOK_TEST_PORTS="first-last" moves them).
_PORTS = os.environ.get("RUNBOOK_TEST_PORTS", "31260-31269")


@dataclass(frozen=True)
class ConfluenceFake:
    site: str

    @property
    def cloud_url(self) -> str:
        return f"{self.site}/wiki"

    @property
    def data_center_url(self) -> str:
        return self.site

    def cloud(self, key: str = "OPS", label: str | None = None, **auth: str) -> ConfluenceSpace:
        credential = ConfluenceAuth.cloud(auth.get("email", EMAIL), auth.get("token", API_TOKEN))
        return ConfluenceSpace(self.cloud_url, key, label, credential)

    def data_center(
        self, key: str = "OPS", label: str | None = None, pat: str = PAT
    ) -> ConfluenceSpace:
        return ConfluenceSpace(self.data_center_url, key, label, ConfluenceAuth.data_center(pat))

    def flavours(self, key: str = "OPS", label: str | None = None) -> list[ConfluenceSpace]:
        return [self.cloud(key, label), self.data_center(key, label)]

    async def control(
        self, session: aiohttp.ClientSession, method: str, path: str, body: Any = None
    ) -> Any:
        """A call to the fake's ``/_fake`` control API; returns its JSON answer."""
        async with session.request(method, f"{self.site}/_fake/{path}", json=body) as response:
            assert response.status < 300, (response.status, await response.text())
            return await response.json()

    async def add_page(self, session: aiohttp.ClientSession, title: str, body: str) -> str:
        """A new current page under OPS's "Runbooks" page; returns its id."""
        created = await self.control(
            session,
            "POST",
            "pages",
            {"space": "OPS", "parentId": RUNBOOKS_PAGE, "title": title, "body": body},
        )
        return str(created["id"])

    async def purge(self, session: aiohttp.ClientSession, page_id: str) -> None:
        """Remove a page for good (nothing to do when it is gone already)."""
        url = f"{self.site}/_fake/pages/{page_id}?purge=1"
        async with session.delete(url) as response:
            assert response.status in (200, 404), response.status

    async def pages(self, session: aiohttp.ClientSession, space: str = "OPS") -> dict[str, Any]:
        """The fake's own record of each current page of ``space``, by id."""
        listed = await self.control(session, "GET", "pages")
        pages = listed["pages"] if isinstance(listed, dict) else listed
        return {
            str(page["id"]): page
            for page in pages
            if page["space"] == space and page["status"] == "current"
        }


def free_port() -> int:
    first, last = (int(part) for part in _PORTS.split("-"))
    for port in range(first, last + 1):
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError(f"no free port in {_PORTS}")


@contextlib.contextmanager
def running_fake(*options: str) -> Iterator[ConfluenceFake]:
    """The fake on a free port; stopped however the caller ends."""
    if not FAKE.exists():
        pytest.skip(f"the shared fake Confluence is not at {FAKE}")
    process = subprocess.Popen(
        [sys.executable, str(FAKE), "--port", str(free_port()), "--quiet", *options],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert process.stdout is not None
        site = process.stdout.readline().strip()
        assert site.startswith("http://127.0.0.1:"), site
        yield ConfluenceFake(site)
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)
        if process.stdout is not None:
            process.stdout.close()


def listed_pages(*options: str) -> list[dict[str, Any]]:
    """``confluence_fake.py --list-pages``: every current page with its probe question."""
    if not FAKE.exists():
        pytest.skip(f"the shared fake Confluence is not at {FAKE}")
    listing = subprocess.run(
        [sys.executable, str(FAKE), "--list-pages", *options],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    pages: list[dict[str, Any]] = json.loads(listing.stdout)
    return pages


@contextlib.asynccontextmanager
async def with_draft_pages(fake: ConfluenceFake) -> AsyncIterator[ConfluenceFake]:
    """The shared fake answers reads only: this front adds the two writes a drafted runbook
    makes (Cloud v2 ``POST /wiki/api/v2/pages``, Data Center v1 ``POST /rest/api/content``, both
    with ``status=draft``), stores the page through the fake's control API (so the fake's own
    API reads it back, ``get-draft=true``), and passes every other request through unchanged,
    credentials checked by the fake itself."""
    async with aiohttp.ClientSession() as session:

        async def passthrough(request: web.Request) -> web.StreamResponse:
            headers = {k: v for k, v in request.headers.items() if k.lower() in _FORWARDED}
            async with session.request(
                request.method,
                fake.site + request.path_qs,
                headers=headers,
                data=await request.read(),
            ) as answer:
                body = await answer.read()
                kept = {
                    k: v
                    for k, v in answer.headers.items()
                    if k.lower() in ("content-type", "retry-after")
                }
                return web.Response(status=answer.status, body=body, headers=kept)

        async def cloud_page(request: web.Request) -> web.StreamResponse:
            page = await request.json()
            auth = {"Authorization": request.headers.get("Authorization", "")}
            async with session.get(
                f"{fake.site}/wiki/api/v2/spaces/{page['spaceId']}", headers=auth
            ) as got:
                if got.status != 200:
                    return web.Response(status=got.status, body=await got.read())
                key = (await got.json())["key"]
            made = await _control_page(
                session, fake, key, page.get("parentId"), page, page["body"]["value"]
            )
            links = {"base": fake.cloud_url, "webui": f"/spaces/{key}/pages/edit-v2/{made['id']}"}
            return web.json_response(
                {"id": str(made["id"]), "status": "draft", "title": page["title"], "_links": links},
                status=200,
            )

        async def dc_content(request: web.Request) -> web.StreamResponse:
            page = await request.json()
            if not request.headers.get("Authorization", "").startswith("Bearer "):
                return web.json_response({"statusCode": 401}, status=401)
            ancestors = page.get("ancestors") or [{}]
            body = page["body"]["storage"]["value"]
            made = await _control_page(
                session, fake, page["space"]["key"], ancestors[-1].get("id"), page, body
            )
            links = {"base": fake.site, "webui": f"/pages/resumedraft.action?draftId={made['id']}"}
            return web.json_response(
                {
                    "id": str(made["id"]),
                    "type": "page",
                    "status": "draft",
                    "title": page["title"],
                    "_links": links,
                }
            )

        app = web.Application()
        app.router.add_post("/wiki/api/v2/pages", cloud_page)
        app.router.add_post("/rest/api/content", dc_content)
        app.router.add_route("*", "/{tail:.*}", passthrough)
        runner, port = await serve_on_loopback(app)
        try:
            yield ConfluenceFake(f"http://127.0.0.1:{port}")
        finally:
            await runner.cleanup()


_FORWARDED = ("authorization", "content-type", "accept")


async def _control_page(
    session: aiohttp.ClientSession,
    fake: ConfluenceFake,
    space: str,
    parent: object,
    page: dict[str, Any],
    body: str,
) -> dict[str, Any]:
    made = await fake.control(
        session,
        "POST",
        "pages",
        {
            "space": space,
            "parentId": parent,
            "title": page["title"],
            "body": body,
            "status": page.get("status", "current"),
            "author": "bot",
        },
    )
    assert isinstance(made, dict)
    return made
