"""The issue's done-when for Confluence: a space read through the client, its pages written as
runbooks, and every page's on-call question (``confluence_fake.py --list-pages``) answered
citing that page."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from rag import FastEmbedder, RagService, Settings, Store, ingest_limits
from rag.answering.answerers import ExtractiveAnswerer
from rag.errors import EmptyRunbookError
from rag.ingest.embed import embedded_groups, prepare_document
from rag.ingest.files import SourceFile
from rag.ingest.report import IngestReport
from rag.ingest.write import ensure_tenant, write_version
from rag.sources.confluence.client import (
    ConfluencePage,
    ConfluenceSpace,
    confluence_document_id,
    fetch_pages,
    list_pages,
    page_runbook,
)
from tests.fakes.confluence import SECRETS, ConfluenceFake, listed_pages, running_fake
from tests.log_guard import LogGuard

# Probe questions allowed to go unanswered or cite another page first (see the test).
MAX_MISSES = 1
# Probe questions answered citing their page first, but from another of its sections.
MAX_SECTION_MISSES = 0


@pytest.fixture(scope="module")
def fake() -> Iterator[ConfluenceFake]:
    with running_fake() as running:
        yield running


@pytest.fixture(autouse=True)
def no_credentials_in_logs(log_guard: LogGuard) -> None:
    for secret in SECRETS:
        log_guard.forbid_secret(secret)


def page_source(space: ConfluenceSpace, page: ConfluencePage) -> SourceFile:
    """A page as the ingest writes it: its document id, and a hash of what it is made from."""
    document_id = confluence_document_id(space, page.page_id)
    fingerprint = json.dumps([page.version, page.title, page.ancestors, page.labels, page.body])
    return SourceFile(
        path=Path(document_id),
        relative_path=document_id,
        document_id=document_id,
        sha256=hashlib.sha256(fingerprint.encode()).hexdigest(),
        runbook=page_runbook(page),
    )


async def sync_space(
    store: Store, embedder: FastEmbedder, settings: Settings, tenant: str, space: ConfluenceSpace
) -> list[str]:
    """List, fetch and write every page; returns the ids of pages with nothing to index."""
    limits = ingest_limits(settings)
    sources: list[SourceFile] = []
    empty: list[str] = []
    async with aiohttp.ClientSession() as session:
        listed = [page.page_id for page in await list_pages(session, space)]
        async for page in fetch_pages(session, space, listed):
            assert isinstance(page, ConfluencePage), page
            try:
                sources.append(page_source(space, page))
            except EmptyRunbookError:
                empty.append(page.page_id)
    await ensure_tenant(store, tenant)
    pending = [prepare_document(tenant, source, True, limits) for source in sources]
    report = IngestReport()
    async for group, vectors, _ in embedded_groups(embedder, pending, limits):
        for document, document_vectors in zip(group, vectors, strict=True):
            await write_version(store, embedder, document, document_vectors, report)
    await store.ensure_vector_index(
        embedder.dim, exact_search_max_chunks=limits.exact_search_max_chunks
    )
    assert report.added == len(sources)
    return empty


# Cloud only: both flavours give the same runbooks (test_confluence_pages proves it), and one
# space embedded is a minute of the suite.
@pytest.mark.slow  # embeds a whole space (a 300 KB page among them) with the real model
async def test_every_pages_probe_question_is_answered_citing_that_page(
    store: Store,
    embedder: FastEmbedder,
    settings: Settings,
    unique_tenant: str,
    fake: ConfluenceFake,
) -> None:
    space = fake.cloud()
    empty = await sync_space(store, embedder, settings, unique_tenant, space)
    pages = listed_pages("--list-all")
    ops = [p for p in pages if p["space"] == "OPS" and p["status"] == "current"]
    assert empty == [p["id"] for p in ops if p["probe_question"] is None]
    service = RagService(
        store=store, embedder=embedder, answerer=ExtractiveAnswerer(), settings=settings
    )
    misses: list[tuple[str, Any]] = []
    section_misses: list[tuple[str, str]] = []
    for page in ops:
        if page["probe_question"] is None:
            continue
        result = await service.ask(unique_tenant, page["probe_question"])
        document_id = f"confluence/{page['id']}"
        ranked = list(dict.fromkeys(evidence.document_id for evidence in result.evidence))
        # Retrieval always puts the page among the first two documents ...
        assert document_id in ranked[:2], (page["title"], ranked[:3])
        cited = [citation.evidence for citation in result.citations]
        if result.status != "answered" or cited[0].document_id != document_id:
            misses.append((page["title"], (result.status, result.reason_code, ranked[:2])))
            continue
        assert cited[0].url is not None and cited[0].url.startswith(space.base_url + "/")
        assert cited[0].title == page["title"]
        quoted = "\n".join(e.content for e in cited if e.document_id == document_id)
        if page["expected_snippet"] not in quoted:
            section_misses.append((page["title"], cited[0].heading_path[-1]))
    # ... and the answer cites it first for all but one question: "a dozen replicas" for "12
    # partitions" is ranked to the dispatch page, but the gate abstains (probability 0.09; 0.10
    # were it asked with "12"): the best chunks are at cosine 0.18-0.29 from the question, below
    # the best chunk of every answerable dev question (docs/answer-quality.md, round 9). Keeping
    # the route planner page's 174 sections from filling the vector half lifts it only to 0.28:
    # the dispatch page's own best chunk is at 0.21 (round 10).
    assert len(misses) <= MAX_MISSES, misses
    # Every answer quotes its page's expected section: "get the data back" for a point-in-time
    # restore opens on "Pick the recovery target" and quotes "Run the restore" too, now that the
    # page's preamble (a path ending on the title "Restore payments-db ...", below its
    # ancestors' titles) is read as the preamble of a page with sections, not as a procedure
    # (docs/answer-quality.md, round 10).
    assert len(section_misses) <= MAX_SECTION_MISSES, section_misses
    # Pages an OPS sync must not import: their answers never come back.
    others = [p for p in pages if p not in ops and p["expected_snippet"]]
    assert others
    for page in others:
        result = await service.ask(unique_tenant, page["probe_question"])
        assert all(page["expected_snippet"] not in c.evidence.content for c in result.citations), (
            page["title"]
        )
