"""Confluence sources against the shared fake Confluence (Cloud v2 and Data Center v1): every
current page's probe question answered citing that page; incremental by page version; pages
gone from the space retired; other spaces, archived pages and drafts never imported."""

from __future__ import annotations

import asyncio
import dataclasses
import subprocess
import sys
from collections.abc import Iterator, Sequence
from typing import Any
from urllib.parse import quote

import aiohttp
import pytest

from bot.core.sources.runs import SyncOutcome, reader_for, run_sync
from rag import (
    RagService,
    Settings,
    SourceListing,
    SourceRead,
    SourceReader,
    SourceRow,
    Store,
    add_source,
    ingest_limits,
    sync_source,
)
from tests.fakes.confluence import API_TOKEN, EMAIL, FAKE, PAT, ConfluenceFake, listed_pages
from tests.git_repos import local_sources
from tests.hash_embedder import HashEmbedder
from tests.test_sources_webhooks import SECRET, bot_serving


@pytest.fixture(scope="session")
def settings(settings: Settings) -> Settings:
    """The session's settings with the operator allowances for this module's sources:
    repositories on file:// and fakes on 127.0.0.1 (issue 36)."""
    return local_sources(settings)


PORT = 31254


@pytest.fixture
def fake() -> Iterator[ConfluenceFake]:
    """The shared fake on this suite's port, fresh for each test (tests edit its pages)."""
    if not FAKE.exists():
        pytest.skip(f"the shared fake Confluence is not at {FAKE}")
    process = subprocess.Popen(
        [sys.executable, str(FAKE), "--port", str(PORT), "--quiet"],
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
        process.wait(timeout=10)
        if process.stdout is not None:
            process.stdout.close()


async def confluence_source(
    store: Store, tenant: str, fake: ConfluenceFake, *, cloud: bool, space: str = "OPS"
) -> SourceRow:
    settings: dict[str, Any] = {"space": space, "label": None}
    if cloud:
        settings |= {"base_url": fake.cloud_url, "email": EMAIL}
        credential = {"token": API_TOKEN}
    else:
        settings |= {"base_url": fake.data_center_url}
        credential = {"pat": PAT}
    return await add_source(
        store,
        tenant=tenant,
        name=space.lower(),
        kind="confluence",
        settings=settings,
        credential=credential,  # plaintext here; the CLI seals it
        webhook_secret={"secret": "s"},
    )


async def synced(
    store: Store, service: RagService, row: SourceRow, settings: Settings
) -> SyncOutcome:
    outcome = await run_sync(store, service.embedder, row, settings=settings, cipher=None)
    assert outcome.report is not None, outcome.error
    return outcome


async def current_ids(store: Store, tenant: str) -> set[str]:
    async with store.pool.connection() as conn:
        cur = await conn.execute(
            "SELECT document_id FROM documents WHERE tenant_id = %s AND NOT superseded", (tenant,)
        )
        return {row[0] for row in await cur.fetchall()}


async def test_every_current_pages_probe_question_finds_that_page(
    store: Store, service: RagService, settings: Settings, unique_tenant: str, fake: ConfluenceFake
) -> None:
    """Each page's probe question (an on-call engineer's words, no heading words) retrieves
    that page among the top three, through its converted sections and its breadcrumb."""
    row = await confluence_source(store, unique_tenant, fake, cloud=True)
    await synced(store, service, row, settings)
    pages = [p for p in listed_pages() if p["space"] == "OPS" and p["probe_question"]]

    missed = []
    for page in pages:
        result = await service.ask(unique_tenant, page["probe_question"])
        top = [e.document_id for e in result.evidence[:3]]
        if f"confluence/{page['id']}" not in top:
            missed.append((page["title"], top))

    assert len(pages) >= 10
    assert missed == []


async def test_only_the_spaces_current_pages_are_imported_and_the_empty_one_is_skipped(
    store: Store, service: RagService, settings: Settings, unique_tenant: str, fake: ConfluenceFake
) -> None:
    row = await confluence_source(store, unique_tenant, fake, cloud=False)
    outcome = await synced(store, service, row, settings)

    ops = [p for p in listed_pages() if p["space"] == "OPS"]
    empty = {p["id"] for p in ops if p["probe_question"] is None}
    assert await current_ids(store, unique_tenant) == {
        f"confluence/{p['id']}" for p in ops if p["id"] not in empty
    }
    assert outcome.report is not None
    assert {s.path for s in outcome.report.skipped} == empty


async def test_an_edited_page_is_the_only_one_fetched_again_and_a_trashed_page_is_retired(
    store: Store, service: RagService, settings: Settings, unique_tenant: str, fake: ConfluenceFake
) -> None:
    row = await confluence_source(store, unique_tenant, fake, cloud=True)
    first = await synced(store, service, row, settings)
    ops = [p for p in listed_pages() if p["space"] == "OPS" and p["probe_question"]]
    edited, trashed = ops[0]["id"], ops[1]["id"]
    async with aiohttp.ClientSession() as session:
        await fake.control(
            session,
            "POST",
            f"pages/{edited}",
            {"body": "<h2>Mitigation</h2><p>Drain the sorting hub onto the spare conveyor.</p>"},
        )
        async with session.delete(f"{fake.site}/_fake/pages/{trashed}") as response:
            assert response.status == 200

    again = await synced(store, service, row, settings)

    assert first.report is not None and again.report is not None
    assert (again.report.changed, again.report.retired, again.report.added) == (1, 1, 0)
    assert again.report.unchanged == first.report.added - 2
    assert f"confluence/{trashed}" not in await current_ids(store, unique_tenant)
    result = await service.ask(unique_tenant, "where do we drain the sorting hub onto?")
    assert f"confluence/{edited}" in {c.evidence.document_id for c in result.citations}


async def test_a_wrong_token_fails_the_sync_naming_the_source_and_retires_nothing(
    store: Store, service: RagService, settings: Settings, unique_tenant: str, fake: ConfluenceFake
) -> None:
    row = await confluence_source(store, unique_tenant, fake, cloud=False)
    await synced(store, service, row, settings)
    before = await current_ids(store, unique_tenant)
    wrong = await add_source(
        store,
        tenant=unique_tenant,
        name="wrong",
        kind="confluence",
        settings={"base_url": fake.data_center_url, "space": "OPS", "label": None},
        credential={"pat": "not-the-pat"},
        webhook_secret={"secret": "s"},
    )

    outcome = await run_sync(store, service.embedder, wrong, settings=settings, cipher=None)

    assert outcome.error_code == "confluence_auth_failed"
    assert "not-the-pat" not in (outcome.error or "")
    assert await current_ids(store, unique_tenant) == before


async def test_a_signed_confluence_page_event_syncs_the_edited_page(
    store: Store, service: RagService, settings: Settings, unique_tenant: str, fake: ConfluenceFake
) -> None:
    row = await add_source(
        store,
        tenant=unique_tenant,
        name="ops",
        kind="confluence",
        settings={"base_url": fake.data_center_url, "space": "OPS", "label": None},
        credential={"pat": PAT},
        webhook_secret={"secret": SECRET},
    )
    await synced(store, service, row, settings)
    page = next(p for p in listed_pages() if p["space"] == "OPS" and p["probe_question"])
    body = "<h2>Mitigation</h2><p>Reroute parcels through the Leeds overflow yard.</p>"
    async with bot_serving(store, service.embedder, settings) as base, aiohttp.ClientSession() as s:
        await fake.control(s, "POST", f"pages/{page['id']}", {"body": body})
        hook = quote(f"{base}/hooks/git/{row.source_id}", safe="")
        notify = f"notify?url={hook}&event=page_updated&id={page['id']}"
        wrong = await fake.control(s, "POST", f"{notify}&secret=not-the-secret")
        signed = await fake.control(s, "POST", f"{notify}&secret={SECRET}")
        cited: set[str] = set()
        for _ in range(100):
            result = await service.ask(unique_tenant, "which yard takes the overflow parcels?")
            cited = {c.evidence.document_id for c in result.citations}
            if f"confluence/{page['id']}" in cited:
                break
            await asyncio.sleep(0.1)

    assert wrong["status"] == 401
    assert signed["status"] == 202
    assert f"confluence/{page['id']}" in cited


class PagesPerRead:
    """A ``SourceReader`` that reads through a real one and keeps how many pages each read got."""

    def __init__(self, inner: SourceReader) -> None:
        self.inner = inner
        self.read: list[int] = []

    async def list_items(self) -> SourceListing:
        return await self.inner.list_items()

    async def read_items(
        self, listing: SourceListing, item_ids: Sequence[str], *, max_bytes: int | None = None
    ) -> SourceRead:
        read = await self.inner.read_items(listing, item_ids, max_bytes=max_bytes)
        self.read.append(len(item_ids) - len(read.unread))
        return read


async def test_page_bodies_past_the_batch_bytes_end_a_read_and_the_rest_follow(
    store: Store, settings: Settings, unique_tenant: str, fake: ConfluenceFake
) -> None:
    """With room for one byte a batch ends at its first page with a body (the one that
    reaches it), and the sync stores exactly what one batch of every page stores."""
    whole, by_bytes = f"{unique_tenant}-whole", f"{unique_tenant}-bytes"
    readers: dict[str, PagesPerRead] = {}
    for tenant, budget in ((whole, 10_000_000), (by_bytes, 1)):
        row = await confluence_source(store, tenant, fake, cloud=True)
        readers[tenant] = PagesPerRead(reader_for(row, settings=settings, cipher=None))
        limits = dataclasses.replace(ingest_limits(settings), sync_batch_bytes=budget)
        await sync_source(store, HashEmbedder(), row, readers[tenant], limits)

    pages = sum(readers[whole].read)
    empty = [p for p in listed_pages() if p["space"] == "OPS" and p["probe_question"] is None]
    assert readers[whole].read == [pages] and pages >= 10 and empty
    assert sum(readers[by_bytes].read) == pages
    assert len(readers[by_bytes].read) == pages - len(empty)  # an empty page adds no bytes
    assert await current_ids(store, by_bytes) == await current_ids(store, whole)
