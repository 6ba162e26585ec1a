"""Confluence Data Center / Server through REST v1 (``BASE/rest/api``): list, read one page.

v1 pages by ``start``/``limit``: the site may apply a smaller limit than asked, so the walk goes
on while the answer links a ``next`` page, whatever the size of the last one. One read expands
everything a page needs: storage body, version with its author, ancestors, labels.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from rag.errors import ConfluenceNotFoundError
from rag.sources.confluence.fields import (
    integer_field,
    object_field,
    page_url,
    results_of,
    text_field,
    timestamp_field,
)
from rag.sources.confluence.http import ConfluenceConnection
from rag.sources.confluence.space import ConfluencePage, PageVersion

_LIST_LIMIT = 100


async def list_server_pages(connection: ConfluenceConnection) -> list[PageVersion]:
    space = connection.space
    try:
        await connection.get(
            _api(connection, f"/space/{space.space_key}"), subject=f"the space {space.space_key}"
        )
    except ConfluenceNotFoundError as exc:
        raise ConfluenceNotFoundError(
            "no such space (or the account may not see it, or the base URL is not the address "
            "Confluence is served at)",
            space_key=space.space_key,
            base_url=space.base_url,
        ) from exc
    expand = "version,metadata.labels" if space.label is not None else "version"
    params = {
        "spaceKey": space.space_key,
        "type": "page",
        "status": "current",
        "expand": expand,
    }
    pages: list[PageVersion] = []
    async for item in _walk(connection, "/content", params, subject="pages"):
        if item.get("status") != "current" or item.get("type", "page") != "page":
            continue
        page_id = text_field(item, "id", subject="a listed page")
        if space.label is not None and space.label not in await _labels(connection, item):
            continue
        version = object_field(item, "version", subject="a listed page")
        pages.append(
            PageVersion(
                page_id=page_id,
                version=integer_field(version, "number", subject="a listed page's version"),
            )
        )
    return pages


async def fetch_server_page(connection: ConfluenceConnection, page_id: str) -> ConfluencePage:
    subject = f"page {page_id}"
    page = await connection.get(
        _api(connection, f"/content/{page_id}"),
        {"expand": "body.storage,version,ancestors,metadata.labels,space"},
        subject=subject,
    )
    space_field = page.get("space")
    space_key = space_field.get("key") if isinstance(space_field, dict) else None
    if page.get("status") != "current" or space_key != connection.space.space_key:
        raise ConfluenceNotFoundError(
            f"page {page_id} is not a current page of the space",
            space_key=connection.space.space_key,
            base_url=connection.space.base_url,
        )
    version = object_field(page, "version", subject=subject)
    author = version.get("by")
    name = author.get("displayName") if isinstance(author, dict) else None
    ancestors = page.get("ancestors")
    body = object_field(object_field(page, "body", subject=subject), "storage", subject=subject)
    return ConfluencePage(
        page_id=text_field(page, "id", subject=subject),
        version=integer_field(version, "number", subject=subject),
        title=text_field(page, "title", subject=subject),
        ancestors=tuple(
            text_field(item, "title", subject=subject)
            for item in (ancestors if isinstance(ancestors, list) else [])
            if isinstance(item, dict)
        ),
        labels=await _labels(connection, page),
        updated=timestamp_field(version, "when", subject=subject),
        author=name if isinstance(name, str) and name.strip() else None,
        web_url=page_url(connection.space, page),
        body=text_field(body, "value", subject=subject, allow_empty=True),
    )


async def _labels(connection: ConfluenceConnection, page: dict[str, Any]) -> tuple[str, ...]:
    """The page's labels: the expanded ones, or all of them read on when there are more."""
    metadata = page.get("metadata")
    inline = metadata.get("labels") if isinstance(metadata, dict) else None
    links = inline.get("_links") if isinstance(inline, dict) else None
    if isinstance(inline, dict) and not (isinstance(links, dict) and links.get("next")):
        return _label_names(results_of(inline, subject="a page's labels"))
    page_id = text_field(page, "id", subject="a page")
    names: list[str] = []
    async for item in _walk(connection, f"/content/{page_id}/label", {}, subject="labels"):
        names.extend(_label_names([item]))
    return tuple(names)


async def _walk(
    connection: ConfluenceConnection, path: str, params: dict[str, str], *, subject: str
) -> AsyncIterator[dict[str, Any]]:
    start = 0
    while True:
        query = {**params, "start": str(start), "limit": str(_LIST_LIMIT)}
        answer = await connection.get(_api(connection, path), query, subject=subject)
        results = results_of(answer, subject=subject)
        for item in results:
            yield item
        links = answer.get("_links")
        if not results or not (isinstance(links, dict) and links.get("next")):
            return
        start += len(results)


def _api(connection: ConfluenceConnection, path: str) -> str:
    return f"{connection.space.base_url}/rest/api{path}"


def _label_names(items: list[dict[str, Any]]) -> tuple[str, ...]:
    return tuple(str(item["name"]) for item in items if isinstance(item.get("name"), str))
