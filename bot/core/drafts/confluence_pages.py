"""A draft as a Confluence draft page under the space's runbook parent: Cloud REST v2
(``POST /pages`` with ``status=draft``) or Data Center REST v1 (``content`` with
``status=draft``). The parent is the space's "Runbooks" page, else its homepage."""

from __future__ import annotations

import base64
import re
from typing import Any

import aiohttp
from markdown_it import MarkdownIt

from bot.core.drafts.change import Delivered, Submission
from bot.core.drafts.forge_http import DeliveryError, ForgeHttp, Reply

RUNBOOK_PARENT = "Runbooks"
_FRONTMATTER = re.compile(r"\A---\n.*?\n---\n", re.S)


def storage_of(markdown: str) -> str:
    """The page body in storage format (XHTML) from the draft's Markdown, frontmatter and the
    title heading left out (the page has its own title)."""
    body = _FRONTMATTER.sub("", markdown, count=1).lstrip()
    body = re.sub(r"\A# [^\n]*\n", "", body)
    return str(MarkdownIt("commonmark", {"xhtmlOut": True}).render(body))


async def create_draft_page(
    session: aiohttp.ClientSession,
    settings: dict[str, Any],
    credential: dict[str, object],
    submission: Submission,
    *,
    sleep_cap_s: float = 30.0,
) -> Delivered:
    base = str(settings["base_url"]).rstrip("/")
    space = str(settings["space"])
    body = storage_of(submission.markdown)
    if settings.get("email"):
        basic = base64.b64encode(f"{settings['email']}:{credential.get('token')}".encode()).decode()
        http = ForgeHttp(
            session, f"{base}/api/v2", {"Authorization": f"Basic {basic}"}, sleep_cap_s=sleep_cap_s
        )
        return await _cloud(http, base, space, submission.title, body)
    pat = credential.get("pat")
    http = ForgeHttp(
        session, f"{base}/rest/api", {"Authorization": f"Bearer {pat}"}, sleep_cap_s=sleep_cap_s
    )
    return await _data_center(http, base, space, submission.title, body)


async def _cloud(http: ForgeHttp, base: str, space: str, title: str, body: str) -> Delivered:
    spaces = _ok(await http.request("GET", "spaces", params={"keys": space}), "space")
    found = (spaces.body or {}).get("results") or []
    if not found:
        raise DeliveryError("not_found", f"Confluence has no space {space}")
    space_id, parent = str(found[0]["id"]), found[0].get("homepageId")
    runbooks = _ok(
        await http.request(
            "GET",
            "pages",
            params={"space-id": space_id, "title": RUNBOOK_PARENT, "status": "current"},
        ),
        "pages",
    )
    listed = (runbooks.body or {}).get("results") or []
    if listed:
        parent = listed[0]["id"]
    page: dict[str, Any] = {
        "spaceId": space_id,
        "status": "draft",
        "title": title,
        "body": {"representation": "storage", "value": body},
    }
    if parent:
        page["parentId"] = str(parent)
    made = _ok(await http.request("POST", "pages", json=page), "page")
    links = made.body.get("_links") or {}
    link = f"{links.get('base') or base}{links.get('editui') or links.get('webui') or ''}"
    return Delivered(kind="confluence", link=link, number=None, path=str(made.body.get("id")))


async def _data_center(http: ForgeHttp, base: str, space: str, title: str, body: str) -> Delivered:
    runbooks = _ok(
        await http.request(
            "GET", "content", params={"spaceKey": space, "title": RUNBOOK_PARENT, "type": "page"}
        ),
        "content",
    )
    listed = (runbooks.body or {}).get("results") or []
    parent = listed[0]["id"] if listed else None
    if parent is None:
        about = _ok(
            await http.request("GET", f"space/{space}", params={"expand": "homepage"}), "space"
        )
        parent = (about.body.get("homepage") or {}).get("id")
    page: dict[str, Any] = {
        "type": "page",
        "status": "draft",
        "title": title,
        "space": {"key": space},
        "body": {"storage": {"value": body, "representation": "storage"}},
    }
    if parent:
        page["ancestors"] = [{"id": str(parent)}]
    made = _ok(await http.request("POST", "content", json=page), "page")
    links = made.body.get("_links") or {}
    link = f"{links.get('base') or base}{links.get('webui') or ''}"
    return Delivered(kind="confluence", link=link, number=None, path=str(made.body.get("id")))


def _ok(reply: Reply, what: str) -> Reply:
    if reply.status == 403:
        raise DeliveryError(
            "read_only", "the Confluence account may read the space but not add pages"
        )
    if reply.status == 404:
        raise DeliveryError("not_found", f"Confluence has no such {what}")
    if reply.status >= 300 or not isinstance(reply.body, dict):
        raise DeliveryError("refused", f"Confluence answered HTTP {reply.status} for the {what}")
    return reply
