"""Reading Confluence pages whole (Cloud REST v2 and Data Center REST v1) and turning them into
runbooks with the page's metadata, against the shared fake."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import AsyncIterator, Iterator
from typing import Any
from urllib.parse import quote_plus

import aiohttp
import pytest
import pytest_asyncio
from pydantic import ValidationError

from rag.errors import ConfigurationError, EmptyRunbookError, RunbookFormatError
from rag.sources.confluence.client import (
    ConfluenceAuth,
    ConfluenceFlavour,
    ConfluenceNotFoundError,
    ConfluencePage,
    ConfluenceSpace,
    confluence_document_id,
    fetch_page,
    fetch_pages,
    page_runbook,
)
from tests.fakes.confluence import (
    API_TOKEN,
    PAT,
    SECRETS,
    ConfluenceFake,
    listed_pages,
    running_fake,
)
from tests.log_guard import LogGuard

RESTORE_PAGE = "4325406"
DC_UNSAFE = re.compile(r"[?&:/\\;#+%]|[^\x00-\x7f]")


@pytest.fixture(scope="module")
def fake() -> Iterator[ConfluenceFake]:
    with running_fake() as running:
        yield running


@pytest.fixture(scope="module")
def ops_pages() -> dict[str, dict[str, Any]]:
    """``--list-pages``: the fake's own account of each current OPS page."""
    return {
        page["id"]: page
        for page in listed_pages()
        if page["space"] == "OPS" and page["status"] == "current"
    }


@pytest.fixture(autouse=True)
def no_credentials_in_logs(log_guard: LogGuard) -> None:
    for secret in SECRETS:
        log_guard.forbid_secret(secret)


@pytest_asyncio.fixture
async def session() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession() as client:
        yield client


async def test_every_page_reads_with_the_same_metadata_from_cloud_and_data_center(
    fake: ConfluenceFake, session: aiohttp.ClientSession, ops_pages: dict[str, dict[str, Any]]
) -> None:
    for page_id, listed in ops_pages.items():
        cloud, data_center = [
            await fetch_page(session, space, page_id) for space in fake.flavours()
        ]
        for page in (cloud, data_center):
            assert page.page_id == page_id
            assert page.title == listed["title"]
            assert page.version == listed["version"]
            assert page.ancestors == tuple(listed["ancestors"])
            assert page.labels == tuple(listed["labels"])
            assert page.author == listed["author"]
            # Data Center gives local time with an offset: the same instant as Cloud's UTC.
            assert page.updated == dt.datetime.fromisoformat(listed["updated"])
            assert page.updated.tzinfo is dt.UTC
        assert cloud.web_url == fake.cloud_url + listed["webui"]
        # Data Center's own rule: titles with URL-unsafe characters get the page-id address.
        if DC_UNSAFE.search(listed["title"]):
            dc_path = f"/pages/viewpage.action?pageId={page_id}"
        else:
            dc_path = "/display/OPS/" + quote_plus(listed["title"])
        assert data_center.web_url == fake.data_center_url + dc_path


async def test_both_flavours_give_the_same_runbook_for_every_page(
    fake: ConfluenceFake, session: aiohttp.ClientSession, ops_pages: dict[str, dict[str, Any]]
) -> None:
    compared = 0
    for page_id, listed in ops_pages.items():
        if listed["probe_question"] is None:
            continue
        cloud, data_center = [
            page_runbook(await fetch_page(session, space, page_id)) for space in fake.flavours()
        ]
        assert cloud.sections == data_center.sections, listed["title"]
        assert cloud.frontmatter.model_dump(exclude={"url"}) == data_center.frontmatter.model_dump(
            exclude={"url"}
        )
        compared += 1
    assert compared >= 12


async def test_reading_pages_together_gives_the_same_pages_with_fewer_requests(
    fake: ConfluenceFake, session: aiohttp.ClientSession, ops_pages: dict[str, dict[str, Any]]
) -> None:
    missing = "999999999"
    wanted = [*ops_pages, missing]
    authors = {page["author"] for page in ops_pages.values()}
    ancestors = {title for page in ops_pages.values() for title in page["ancestors"]}
    for space in fake.flavours():
        await fake.control(session, "DELETE", "requests")
        one_by_one = [await fetch_page(session, space, page_id) for page_id in ops_pages]
        separate_requests = len(await fake.control(session, "GET", "requests"))
        for concurrency in (1, 4):
            await fake.control(session, "DELETE", "requests")
            together = [
                page async for page in fetch_pages(session, space, wanted, concurrency=concurrency)
            ]
            requests = len(await fake.control(session, "GET", "requests"))
            assert together[:-1] == one_by_one, space.flavour
            assert isinstance(together[-1], ConfluenceNotFoundError)
            assert missing in str(together[-1])
            if space.flavour is ConfluenceFlavour.CLOUD and concurrency == 1:
                # Per page: the page and its ancestors' ids; the space id once, each author's
                # name and each ancestor's title at most once.
                bound = 1 + 2 * len(wanted) + len(authors) + len(ancestors)
                assert requests <= bound < separate_requests, (requests, separate_requests)
            elif space.flavour is ConfluenceFlavour.DATA_CENTER:
                assert requests == separate_requests + 1


async def test_a_page_runbook_has_ancestors_above_its_title_and_the_page_metadata(
    fake: ConfluenceFake, session: aiohttp.ClientSession
) -> None:
    page = await fetch_page(session, fake.cloud(), RESTORE_PAGE)
    runbook = page_runbook(page)
    breadcrumb = (
        "Operations Home",
        "Runbooks",
        "Payments API: 5xx errors & timeouts",
        "Postgres failover (payments-db)",
        "Restore payments-db to a point in time",
    )
    assert runbook.title == "Restore payments-db to a point in time"
    assert all(section.heading_path[:5] == breadcrumb for section in runbook.sections)
    assert (*breadcrumb, "Run the restore") in [s.heading_path for s in runbook.sections]
    meta = runbook.frontmatter
    assert meta.title == runbook.title
    assert meta.tags == ("service-payments", "database", "backup")
    assert meta.service == "payments"
    assert meta.owner == "Priya Raman"
    assert meta.updated == "2024-09-30T07:55:12+00:00"
    assert meta.url == page.web_url and meta.url.startswith(fake.cloud_url + "/spaces/OPS/pages/")
    assert meta.id is None


async def test_a_page_at_the_space_root_has_its_title_as_the_whole_breadcrumb(
    fake: ConfluenceFake, session: aiohttp.ClientSession, ops_pages: dict[str, dict[str, Any]]
) -> None:
    [root_page] = [p for p in ops_pages.values() if p["title"].startswith("Route planner")]
    for space in fake.flavours():
        page = await fetch_page(session, space, root_page["id"])
        assert page.ancestors == ()
        runbook = page_runbook(page)
        assert {section.heading_path[0] for section in runbook.sections} == {page.title}
        assert runbook.frontmatter.service == "routing"


async def test_the_300_kb_page_is_read_and_parsed_whole_in_both_flavours(
    fake: ConfluenceFake, session: aiohttp.ClientSession, ops_pages: dict[str, dict[str, Any]]
) -> None:
    [big] = [p for p in ops_pages.values() if p["body_bytes"] > 290_000]
    for space in fake.flavours():
        page = await fetch_page(session, space, big["id"])
        assert len(page.body.encode()) == big["body_bytes"]
        runbook = page_runbook(page)
        assert len(runbook.sections) > 170
        assert any(
            section.heading_path[-1] == big["expected_heading"]
            and big["expected_snippet"] in section.text
            for section in runbook.sections
        )


async def test_an_empty_page_has_no_runbook(
    fake: ConfluenceFake, session: aiohttp.ClientSession, ops_pages: dict[str, dict[str, Any]]
) -> None:
    [empty] = [p for p in ops_pages.values() if p["body_bytes"] == 0]
    for space in fake.flavours():
        page = await fetch_page(session, space, empty["id"])
        assert page.body == ""
        with pytest.raises(EmptyRunbookError):
            page_runbook(page)


async def test_a_malformed_page_is_still_read_section_by_section(
    fake: ConfluenceFake, session: aiohttp.ClientSession, ops_pages: dict[str, dict[str, Any]]
) -> None:
    [redis] = [p for p in ops_pages.values() if p["title"] == "Redis cache eviction storm"]
    runbook = page_runbook(await fetch_page(session, fake.data_center(), redis["id"]))
    headings = [section.heading_path[-1] for section in runbook.sections]
    assert headings == ["Symptoms", "Diagnosis", "Mitigation", "Follow-up"]


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        ("<div>" * 300 + "<p>deep</p>" + "</div>" * 300, "nested too deeply"),
        ("<h2>Symptoms</h2><h2>Fix</h2>", "no text under any heading"),
    ],
)
async def test_an_unreadable_page_is_a_format_error_with_its_reason(
    fake: ConfluenceFake, session: aiohttp.ClientSession, body: str, reason: str
) -> None:
    page_id = await fake.add_page(session, f"Unreadable probe {len(body)}", body)
    try:
        for space in fake.flavours():
            page = await fetch_page(session, space, page_id)
            with pytest.raises(RunbookFormatError, match=reason):
                page_runbook(page)
    finally:
        await fake.purge(session, page_id)


async def test_an_edited_page_reads_with_its_new_version_text_and_time(
    fake: ConfluenceFake, session: aiohttp.ClientSession
) -> None:
    page_id = await fake.add_page(session, "Edit probe", "<h2>Fix</h2><p>restart the relay</p>")
    try:
        before = await fetch_page(session, fake.cloud(), page_id)
        await fake.control(
            session,
            "POST",
            f"pages/{page_id}",
            {"body": "<h2>Fix</h2><p>drain the relay first</p>", "author": "amara"},
        )
        for space in fake.flavours():
            after = await fetch_page(session, space, page_id)
            assert after.version == before.version + 1
            assert after.updated > before.updated
            assert after.author == "Amara Okafor"
            [section] = page_runbook(after).sections
            assert section.text == "drain the relay first"
    finally:
        await fake.purge(session, page_id)


@pytest.mark.parametrize("status", ["trashed", "archived", "draft", "purged", "elsewhere"])
async def test_a_page_that_is_not_a_current_page_of_the_space_is_not_found(
    fake: ConfluenceFake, session: aiohttp.ClientSession, status: str
) -> None:
    if status == "elsewhere":
        page_id = next(p["id"] for p in listed_pages() if p["space"] == "HR")
    else:
        page_id = await fake.add_page(session, f"Not found probe {status}", "<p>x</p>")
        if status == "purged":
            await fake.purge(session, page_id)
        else:
            await fake.control(session, "POST", f"pages/{page_id}", {"status": status})
    try:
        for space in fake.flavours():
            with pytest.raises(ConfluenceNotFoundError, match=page_id):
                await fetch_page(session, space, page_id)
    finally:
        if status != "elsewhere":
            await fake.purge(session, page_id)


async def test_a_page_id_that_is_not_a_number_is_never_requested(
    fake: ConfluenceFake, session: aiohttp.ClientSession
) -> None:
    with pytest.raises(ConfluenceNotFoundError, match="not a page id"):
        await fetch_page(session, fake.cloud(), "../../admin")


def test_the_document_id_is_the_page_id_under_confluence(fake: ConfluenceFake) -> None:
    for space in fake.flavours():
        assert confluence_document_id(space, RESTORE_PAGE) == "confluence/4325406"


def test_the_credential_decides_the_flavour_and_never_shows_in_repr() -> None:
    cloud = ConfluenceAuth.cloud("a@example.com", API_TOKEN)
    data_center = ConfluenceAuth.data_center(PAT)
    assert cloud.flavour is ConfluenceFlavour.CLOUD
    assert data_center.flavour is ConfluenceFlavour.DATA_CENTER
    space = ConfluenceSpace("https://acme.atlassian.net/wiki/", "OPS", " ", cloud)
    assert space.base_url == "https://acme.atlassian.net/wiki" and space.label is None
    for shown in (repr(cloud), repr(data_center), repr(space), str(space)):
        assert API_TOKEN not in shown and PAT not in shown


@pytest.mark.parametrize(
    "fields",
    [
        {},
        {"email": "a@example.com"},
        {"api_token": "t"},
        {"email": "a@example.com", "api_token": "t", "personal_access_token": "p"},
        {"personal_access_token": ""},
    ],
)
def test_a_credential_is_an_email_with_a_token_or_a_personal_access_token(
    fields: dict[str, str],
) -> None:
    with pytest.raises(ValidationError):
        ConfluenceAuth.model_validate(fields)


@pytest.mark.parametrize(
    ("base_url", "key"),
    [
        ("acme.atlassian.net/wiki", "OPS"),
        ("ftp://acme.atlassian.net/wiki", "OPS"),
        ("https://user:pw@acme.atlassian.net/wiki", "OPS"),
        ("https://acme.atlassian.net/wiki?x=1", "OPS"),
        ("https://acme.atlassian.net/wiki", "OPS/../HR"),
        ("https://acme.atlassian.net/wiki", ""),
    ],
)
def test_a_space_needs_an_http_base_url_and_a_space_key(base_url: str, key: str) -> None:
    with pytest.raises(ConfigurationError):
        ConfluenceSpace(base_url, key, None, ConfluenceAuth.data_center(PAT))


def test_several_service_labels_name_the_first_alphabetically() -> None:
    page = ConfluencePage(
        page_id="1",
        version=1,
        title="Shared cache",
        ancestors=(),
        labels=("service-zeta", "cache", "service-alpha", "service-"),
        updated=dt.datetime(2026, 1, 2, tzinfo=dt.UTC),
        author=None,
        web_url="https://acme.atlassian.net/wiki/spaces/OPS/pages/1",
        body="<p>flush it</p>",
    )
    meta = page_runbook(page).frontmatter
    assert meta.service == "alpha" and meta.owner is None
    assert meta.tags == page.labels
