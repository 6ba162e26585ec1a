"""The Confluence kind of source: a space (optionally only pages with a label), read with the
Confluence client (``rag.sources.confluence.client``) into the sync's items.

An item is a page id, its version key the page's version number: an incremental sync fetches
only the pages whose version changed, and a page gone from the space (deleted, archived, moved
away, unlabelled) retires its document. The page's metadata comes with its runbook
(``page_runbook``): ancestors as breadcrumb, labels as tags and service, author as owner, web
address as url; its version time becomes ``updated`` (from the source, so frontmatter-like
values of the page never claim it).
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Mapping, Sequence
from contextlib import aclosing
from dataclasses import dataclass
from typing import Any

import aiohttp

from rag.errors import ConfigurationError, EmptyRunbookError, RunbookFormatError
from rag.sources.access import SourceAccess
from rag.sources.confluence.client import (
    REQUEST_TIMEOUT,
    ConfluenceAuth,
    ConfluenceNotFoundError,
    ConfluencePage,
    ConfluenceSpace,
    confluence_document_id,
    fetch_pages,
    list_pages,
    page_runbook,
)
from rag.sources.connector import guarded_session
from rag.sources.reader import ItemProblem, SourceDocument, SourceListing, SourceMeta, SourceRead


@dataclass(frozen=True)
class ConfluenceReader:
    """One Confluence source; ``max_page_bytes`` caps a page's storage body. Every connection
    obeys ``access`` (public https addresses unless the operator allows more)."""

    name: str
    space: ConfluenceSpace
    max_page_bytes: int
    access: SourceAccess = SourceAccess()

    def _session(self) -> aiohttp.ClientSession:
        plain_http = self.space.base_url.startswith("http://")
        return guarded_session(self.access, plain_http=plain_http, timeout=REQUEST_TIMEOUT)

    async def list_items(self) -> SourceListing:
        async with self._session() as session:
            pages = await list_pages(session, self.space)
        return SourceListing(items={page.page_id: str(page.version) for page in pages})

    async def read_items(
        self, listing: SourceListing, item_ids: Sequence[str], *, max_bytes: int | None = None
    ) -> SourceRead:
        read = SourceRead()
        if not item_ids:
            return read
        asked = list(item_ids)
        index, total = 0, 0
        async with self._session() as session:
            # Pages come in the order asked, a page gone since the listing as its error.
            pages = fetch_pages(session, self.space, asked)
            async with aclosing(pages):
                async for page in pages:
                    if isinstance(page, ConfluenceNotFoundError):
                        # Its document stays; the next sync's listing retires it if it is gone.
                        read.problems.append(
                            ItemProblem(asked[index], "gone since the listing", False)
                        )
                        index += 1
                        continue
                    self._add(read, page)
                    index += 1
                    total += len(page.body.encode())
                    if max_bytes is not None and total >= max_bytes:
                        break  # the rest start the next read
        read.unread.extend(asked[index:])
        return read

    def _add(self, read: SourceRead, page: ConfluencePage) -> None:
        size = len(page.body.encode())
        if size > self.max_page_bytes:
            read.problems.append(
                ItemProblem(
                    page.page_id,
                    f"page body is {size} bytes, over the {self.max_page_bytes}-byte cap",
                    skipped=True,
                )
            )
            return
        try:
            runbook = page_runbook(page)
        except EmptyRunbookError:
            read.problems.append(ItemProblem(page.page_id, "empty page", skipped=True))
            return
        except RunbookFormatError as exc:
            read.problems.append(ItemProblem(page.page_id, exc.reason, skipped=False))
            return
        updated = page.updated.date().isoformat()
        runbook = dataclasses.replace(
            runbook, frontmatter=runbook.frontmatter.model_copy(update={"updated": None})
        )
        document_id = confluence_document_id(self.space, page.page_id)
        fingerprint = "\0".join(
            (page.title, *page.ancestors, "", *page.labels, "", page.author or "", page.body)
        )
        read.documents.append(
            SourceDocument(
                item_id=page.page_id,
                version=str(page.version),
                document_id=document_id,
                path=document_id,
                sha256=hashlib.sha256(fingerprint.encode()).hexdigest(),
                runbook=runbook,
                meta=SourceMeta(updated=updated),
            )
        )


def confluence_reader(
    name: str,
    settings: Mapping[str, Any],
    credential: Mapping[str, Any],
    *,
    max_page_bytes: int,
    access: SourceAccess | None = None,
) -> ConfluenceReader:
    """The reader of a stored Confluence source: ``settings`` (base_url, space, label, email)
    and its opened credential (``token`` with an e-mail: Cloud; ``pat``: Data Center)."""
    email, token, pat = settings.get("email"), credential.get("token"), credential.get("pat")
    if isinstance(pat, str):
        auth = ConfluenceAuth.data_center(pat)
    elif isinstance(email, str) and isinstance(token, str):
        auth = ConfluenceAuth.cloud(email, token)
    else:
        raise ConfigurationError(f"source {name!r} has no usable Confluence credential")
    label = settings.get("label")
    space = ConfluenceSpace(
        base_url=str(settings["base_url"]),
        space_key=str(settings["space"]),
        label=label if isinstance(label, str) else None,
        auth=auth,
    )
    return ConfluenceReader(
        name=name, space=space, max_page_bytes=max_page_bytes, access=access or SourceAccess()
    )
