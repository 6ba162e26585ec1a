"""Confluence Cloud and Data Center as a runbook source: list a space's current pages with their
versions, read a page whole, and turn it into a runbook.

The credential picks the API: e-mail + API token → Cloud REST v2 below ``BASE/api/v2``; a
personal access token → Data Center REST v1 below ``BASE/rest/api``. Every failure is a
``ConfluenceError`` naming the space and the site (never the credential).
"""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncGenerator, Awaitable, Callable, Sequence

import aiohttp

from rag.errors import (
    ConfluenceAuthError,
    ConfluenceError,
    ConfluenceNotFoundError,
    ConfluenceResponseError,
    ConfluenceUnreachableError,
)
from rag.sources.confluence.cloud import CloudReader, list_cloud_pages
from rag.sources.confluence.fields import MalformedAnswer
from rag.sources.confluence.http import (
    REQUEST_TIMEOUT,
    ConfluenceConnection,
    RetryPolicy,
    concurrently,
)
from rag.sources.confluence.runbook import (
    SERVICE_LABEL_PREFIX,
    confluence_document_id,
    page_runbook,
)
from rag.sources.confluence.server import fetch_server_page, list_server_pages
from rag.sources.confluence.space import (
    ConfluenceAuth,
    ConfluenceFlavour,
    ConfluencePage,
    ConfluenceSpace,
    PageVersion,
)

logger = logging.getLogger(__name__)


async def list_pages(
    session: aiohttp.ClientSession, space: ConfluenceSpace, *, retry: RetryPolicy | None = None
) -> list[PageVersion]:
    """Every current page of the space (with ``space.label``, only those labelled so), with its
    version; archived pages, drafts, trashed pages and other spaces' pages are left out."""
    started = time.monotonic()
    connection = ConfluenceConnection(session, space, retry=retry)
    try:
        if space.flavour is ConfluenceFlavour.CLOUD:
            pages = await list_cloud_pages(connection)
        else:
            pages = await list_server_pages(connection)
    except MalformedAnswer as exc:
        raise _malformed(space, exc) from exc
    logger.info(
        "confluence %s: %d pages listed in %.2fs",
        space.space_key, len(pages), time.monotonic() - started,
    )  # fmt: skip
    return pages


async def fetch_page(
    session: aiohttp.ClientSession,
    space: ConfluenceSpace,
    page_id: str,
    *,
    retry: RetryPolicy | None = None,
) -> ConfluencePage:
    """One current page of the space, with its storage-format body.

    Raises ``ConfluenceNotFoundError`` when it is gone, archived or in another space now.
    """
    return await _reader(session, space, retry)(page_id)


async def fetch_pages(
    session: aiohttp.ClientSession,
    space: ConfluenceSpace,
    page_ids: Sequence[str],
    *,
    concurrency: int = 4,
    retry: RetryPolicy | None = None,
) -> AsyncGenerator[ConfluencePage | ConfluenceNotFoundError, None]:
    """Each page in the order asked, read ``concurrency`` at a time; on Cloud what pages share
    (space id, ancestors' titles, authors' names) is read once instead of once per page.

    A page gone since the listing comes as its ``ConfluenceNotFoundError``; any other failure
    (credentials, an unreachable site) ends the walk by raising.
    """
    read = _reader(session, space, retry)

    async def read_one(page_id: str) -> ConfluencePage | ConfluenceNotFoundError:
        try:
            return await read(page_id)
        except ConfluenceNotFoundError as gone:
            return gone

    for start in range(0, len(page_ids), max(1, concurrency)):
        window = page_ids[start : start + max(1, concurrency)]
        for outcome in await concurrently(*(read_one(page_id) for page_id in window)):
            yield outcome


def _reader(
    session: aiohttp.ClientSession, space: ConfluenceSpace, retry: RetryPolicy | None
) -> Callable[[str], Awaitable[ConfluencePage]]:
    """A page reader over one connection: Cloud's remembers what pages share."""
    connection = ConfluenceConnection(session, space, retry=retry)
    cloud = CloudReader(connection) if space.flavour is ConfluenceFlavour.CLOUD else None

    async def read(page_id: str) -> ConfluencePage:
        if not page_id.isdigit():
            raise ConfluenceNotFoundError(
                f"{page_id!r} is not a page id", space_key=space.space_key, base_url=space.base_url
            )
        try:
            if cloud is not None:
                return await cloud.page(page_id)
            return await fetch_server_page(connection, page_id)
        except MalformedAnswer as exc:
            raise _malformed(space, exc) from exc

    return read


def _malformed(space: ConfluenceSpace, exc: MalformedAnswer) -> ConfluenceResponseError:
    return ConfluenceResponseError(str(exc), space_key=space.space_key, base_url=space.base_url)


__all__ = [
    "REQUEST_TIMEOUT",
    "SERVICE_LABEL_PREFIX",
    "ConfluenceAuth",
    "ConfluenceAuthError",
    "ConfluenceError",
    "ConfluenceFlavour",
    "ConfluenceNotFoundError",
    "ConfluencePage",
    "ConfluenceResponseError",
    "ConfluenceSpace",
    "ConfluenceUnreachableError",
    "PageVersion",
    "RetryPolicy",
    "confluence_document_id",
    "fetch_page",
    "fetch_pages",
    "list_pages",
    "page_runbook",
]
