"""Confluence Cloud through REST v2 (``BASE/api/v2``): list a space's current pages, read one.

Lists follow the opaque cursor in ``_links.next`` to the end. v2 gives ancestors as ids and the
author as an account id, so a page read asks for their titles and display name as well.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import urljoin, urlsplit, urlunsplit

from rag.errors import ConfluenceAuthError, ConfluenceNotFoundError, ConfluenceResponseError
from rag.sources.confluence.fields import (
    integer_field,
    object_field,
    page_url,
    results_of,
    text_field,
    timestamp_field,
)
from rag.sources.confluence.http import ConfluenceConnection, concurrently, first_failure
from rag.sources.confluence.space import ConfluencePage, PageVersion

_LIST_LIMIT = "250"
# Concurrent label reads when a label filter needs each page's labels.
_LABEL_READS = 4


async def list_cloud_pages(connection: ConfluenceConnection) -> list[PageVersion]:
    space = connection.space
    space_id = await CloudReader(connection).space_id()
    pages: list[PageVersion] = []
    params = {"status": "current", "limit": _LIST_LIMIT}
    async for item in _walk(connection, f"/spaces/{space_id}/pages", params, subject="pages"):
        # Archived pages come only when asked for and drafts never, but a list is not trusted.
        if item.get("status") != "current":
            continue
        version = object_field(item, "version", subject="a listed page")
        pages.append(
            PageVersion(
                page_id=text_field(item, "id", subject="a listed page"),
                version=integer_field(version, "number", subject="a listed page's version"),
            )
        )
    if space.label is None:
        return pages
    gate = asyncio.Semaphore(_LABEL_READS)

    async def labelled(page: PageVersion) -> bool:
        async with gate:
            return space.label in await _labels(connection, page.page_id)

    keep = await concurrently(*(labelled(page) for page in pages))
    return [page for page, wanted in zip(pages, keep, strict=True) if wanted]


class CloudReader:
    """Reads pages of one space, remembering what pages share — the space id, ancestors' titles,
    authors' names — so each page after the first costs two requests (page, ancestor ids)."""

    def __init__(self, connection: ConfluenceConnection) -> None:
        self.connection = connection
        self._space_id: str | None = None
        self._titles: dict[str, str] = {}
        self._names: dict[str, str | None] = {}

    async def page(self, page_id: str) -> ConfluencePage:
        connection = self.connection
        subject = f"page {page_id}"
        # Independent reads at once; the first failure cancels the others.
        try:
            async with asyncio.TaskGroup() as group:
                space_task = group.create_task(self.space_id())
                page_task = group.create_task(
                    connection.get(
                        _api(connection, f"/pages/{page_id}"),
                        {"body-format": "storage", "include-labels": "true"},
                        subject=subject,
                    )
                )
                ancestors_task = group.create_task(self._ancestor_titles(page_id))
        except ExceptionGroup as failed:
            raise first_failure(failed) from None
        page = page_task.result()
        if page.get("status") != "current" or str(page.get("spaceId")) != space_task.result():
            raise ConfluenceNotFoundError(
                f"page {page_id} is not a current page of the space",
                space_key=connection.space.space_key,
                base_url=connection.space.base_url,
            )
        version = object_field(page, "version", subject=subject)
        labels_field = page.get("labels")
        inline = labels_field if isinstance(labels_field, dict) else {}
        labels: tuple[str, ...]
        if isinstance(inline.get("meta"), dict) and not inline["meta"].get("hasMore"):
            labels = _label_names(results_of(inline, subject=subject))
        else:
            labels = await _labels(connection, page_id)
        author_id = version.get("authorId")
        body = object_field(object_field(page, "body", subject=subject), "storage", subject=subject)
        return ConfluencePage(
            page_id=text_field(page, "id", subject=subject),
            version=integer_field(version, "number", subject=subject),
            title=text_field(page, "title", subject=subject),
            ancestors=ancestors_task.result(),
            labels=labels,
            updated=timestamp_field(version, "createdAt", subject=subject),
            author=await self._display_name(author_id) if isinstance(author_id, str) else None,
            web_url=page_url(connection.space, page),
            body=text_field(body, "value", subject=subject, allow_empty=True),
        )

    async def space_id(self) -> str:
        if self._space_id is None:
            self._space_id = await _find_space_id(self.connection)
        return self._space_id

    async def _ancestor_titles(self, page_id: str) -> tuple[str, ...]:
        """Titles from the space root down to the page's parent."""
        connection = self.connection
        subject = f"the ancestors of page {page_id}"
        answer = await connection.get(
            _api(connection, f"/pages/{page_id}/ancestors"),
            {"limit": _LIST_LIMIT},
            subject=subject,
        )
        results = results_of(answer, subject=subject)
        ids = [text_field(item, "id", subject=subject) for item in results]
        unknown = [ancestor for ancestor in ids if ancestor not in self._titles]
        if unknown:
            params = {"id": ",".join(unknown), "status": "current,archived", "limit": _LIST_LIMIT}
            async for item in _walk(connection, "/pages", params, subject=subject):
                title = text_field(item, "title", subject=subject)
                self._titles[text_field(item, "id", subject=subject)] = title
        return tuple(self._titles[ancestor] for ancestor in ids if ancestor in self._titles)

    async def _display_name(self, account_id: str) -> str | None:
        if account_id not in self._names:
            self._names[account_id] = await _display_name(self.connection, account_id)
        return self._names[account_id]


async def _find_space_id(connection: ConfluenceConnection) -> str:
    space = connection.space
    try:
        found = await connection.get(
            _api(connection, "/spaces"),
            {"keys": space.space_key},
            subject=f"the space {space.space_key}",
        )
    except ConfluenceNotFoundError as exc:
        # The space list answers an empty list for a missing key: a 404 for the list itself is
        # how Cloud has been seen to answer credentials it does not accept.
        raise ConfluenceAuthError(
            f"the site answered 404 for its own space list; check {space.auth.credential_name} "
            "and that the base URL is the one users open (https://SITE.atlassian.net/wiki)",
            space_key=space.space_key,
            base_url=space.base_url,
        ) from exc
    for item in results_of(found, subject="the space list"):
        if item.get("key") == space.space_key:
            return text_field(item, "id", subject="the space")
    raise ConfluenceNotFoundError(
        "no such space (or the account may not see it)",
        space_key=space.space_key,
        base_url=space.base_url,
    )


async def _labels(connection: ConfluenceConnection, page_id: str) -> tuple[str, ...]:
    names: list[str] = []
    async for item in _walk(
        connection, f"/pages/{page_id}/labels", {"limit": _LIST_LIMIT}, subject=f"page {page_id}"
    ):
        names.extend(_label_names([item]))
    return tuple(names)


async def _display_name(connection: ConfluenceConnection, account_id: str) -> str | None:
    answer = await connection.post(
        _api(connection, "/users-bulk"), {"accountIds": [account_id]}, subject="the page's author"
    )
    for user in results_of(answer, subject="the page's author"):
        if user.get("accountId") == account_id:
            name = user.get("displayName") or user.get("publicName")
            return name if isinstance(name, str) and name.strip() else None
    return None


async def _walk(
    connection: ConfluenceConnection, path: str, params: dict[str, str], *, subject: str
) -> AsyncIterator[dict[str, Any]]:
    """Every result of a v2 list, following ``_links.next`` (a path on the site's origin)."""
    url: str | None = _api(connection, path)
    query: dict[str, str] | None = params
    while url is not None:
        answer = await connection.get(url, query, subject=subject)
        for item in results_of(answer, subject=subject):
            yield item
        links = answer.get("_links")
        following = links.get("next") if isinstance(links, dict) else None
        url = (
            _same_origin(connection, following, subject=subject)
            if isinstance(following, str)
            else None
        )
        query = None  # the next link carries the whole query


def _same_origin(connection: ConfluenceConnection, link: str, *, subject: str) -> str:
    """The next page's URL, only on the site's own origin (scheme, host, port): the request
    carries the credential, so a link elsewhere is a recorded error, never followed.

    Cloud links a path on the origin (``/wiki/api/v2/…?cursor=…``); an absolute URL is taken
    when its origin is the site's. Anything else (``.evil.example/…``, ``:8443/…``,
    ``@evil.example/…``, ``//evil.example/…``) is an answer the client does not use.
    """
    space = connection.space
    site = urlsplit(space.base_url)
    try:
        if link.startswith("/") and not link.startswith("//"):
            target = urlsplit(urljoin(space.origin + "/", link))
        else:
            target = urlsplit(link)
        origin = (target.scheme, target.hostname, _port_of(target.scheme, target.port))
    except ValueError:
        origin = None
    wanted = (site.scheme, site.hostname, _port_of(site.scheme, site.port))
    if origin != wanted or target.username is not None or target.password is not None:
        raise ConfluenceResponseError(
            f"{subject}: the next-page link does not lead to {space.origin}; not followed",
            space_key=space.space_key,
            base_url=space.base_url,
        )
    return urlunsplit((site.scheme, site.netloc, target.path, target.query, ""))


def _port_of(scheme: str, port: int | None) -> int | None:
    if port is not None:
        return port
    return {"https": 443, "http": 80}.get(scheme)


def _api(connection: ConfluenceConnection, path: str) -> str:
    return f"{connection.space.base_url}/api/v2{path}"


def _label_names(items: list[dict[str, Any]]) -> tuple[str, ...]:
    return tuple(str(item["name"]) for item in items if isinstance(item.get("name"), str))
