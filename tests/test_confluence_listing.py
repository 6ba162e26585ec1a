"""Listing a Confluence space's current pages, Cloud (REST v2) and Data Center (REST v1), against
the shared fake: pagination, exclusions, labels, throttling, and the errors a sync reports."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

import aiohttp
import pytest
import pytest_asyncio

from rag.sources.confluence.client import (
    ConfluenceAuth,
    ConfluenceAuthError,
    ConfluenceNotFoundError,
    ConfluenceSpace,
    ConfluenceUnreachableError,
    PageVersion,
    RetryPolicy,
    list_pages,
)
from tests.fakes.confluence import SECRETS, ConfluenceFake, free_port, listed_pages, running_fake
from tests.log_guard import LogGuard

WRONG_TOKEN = "wrong-token-5f9d2c"


@pytest.fixture(scope="module")
def fake() -> Iterator[ConfluenceFake]:
    with running_fake() as running:
        yield running


@pytest.fixture(autouse=True)
def no_credentials_in_logs(log_guard: LogGuard) -> None:
    for secret in (*SECRETS, WRONG_TOKEN):
        log_guard.forbid_secret(secret)


@pytest_asyncio.fixture
async def session() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession() as client:
        yield client


def versions(pages: dict[str, Any]) -> set[PageVersion]:
    return {PageVersion(page_id, page["version"]) for page_id, page in pages.items()}


async def list_requests(fake: ConfluenceFake, session: aiohttp.ClientSession) -> list[Any]:
    log = await fake.control(session, "GET", "requests")
    entries = log["requests"] if isinstance(log, dict) else log
    return [entry for entry in entries if entry["api"] != "fake"]


async def test_every_current_page_is_listed_in_both_flavours_across_several_answer_pages(
    fake: ConfluenceFake, session: aiohttp.ClientSession
) -> None:
    expected = versions(await fake.pages(session))
    # The fake answers at most 5 results per request, whatever limit is asked for.
    assert len(expected) >= 13
    for space in fake.flavours():
        await fake.control(session, "DELETE", "requests")
        pages = await list_pages(session, space)
        assert set(pages) == expected, space.flavour
        assert len(pages) == len(expected)
        paths = [entry["path"] for entry in await list_requests(fake, session)]
        walked = [path for path in paths if path.endswith(("/pages", "/content"))]
        assert len(walked) >= 3, (space.flavour, paths)


async def test_archived_draft_trashed_and_other_spaces_pages_are_left_out(
    fake: ConfluenceFake, session: aiohttp.ClientSession
) -> None:
    everything = listed_pages("--list-all")
    unwanted = {
        page["id"] for page in everything if page["space"] != "OPS" or page["status"] != "current"
    }
    statuses = {page["status"] for page in everything if page["space"] == "OPS"}
    assert {"archived", "draft", "trashed"} <= statuses
    assert any(page["space"] == "HR" for page in everything)
    for space in fake.flavours():
        listed = {page.page_id for page in await list_pages(session, space)}
        assert listed and not listed & unwanted, space.flavour


async def test_a_label_keeps_only_the_pages_carrying_it(
    fake: ConfluenceFake, session: aiohttp.ClientSession
) -> None:
    pages = await fake.pages(session)
    labelled = {page_id for page_id, page in pages.items() if "database" in page["labels"]}
    assert 0 < len(labelled) < len(pages)
    for space in fake.flavours(label="database"):
        assert {page.page_id for page in await list_pages(session, space)} == labelled
    for space in fake.flavours(label="no-page-has-this-label"):
        assert await list_pages(session, space) == []


async def test_throttled_requests_are_retried_after_retry_after_until_the_list_is_whole(
    fake: ConfluenceFake, session: aiohttp.ClientSession
) -> None:
    expected = versions(await fake.pages(session))
    await fake.control(session, "POST", "config", {"rate_limit_every": 3})
    try:
        for space in fake.flavours():
            await fake.control(session, "DELETE", "requests")
            assert set(await list_pages(session, space)) == expected, space.flavour
            statuses = [r["status"] for r in await list_requests(fake, session)]
            assert 429 in statuses and statuses[-1] == 200, statuses
    finally:
        await fake.control(session, "POST", "config", {"rate_limit_every": 0})


async def test_a_site_that_keeps_throttling_is_reported_unreachable_after_bounded_retries(
    fake: ConfluenceFake, session: aiohttp.ClientSession
) -> None:
    await fake.control(session, "POST", "fail", {"pattern": "/(api/v2|rest/api)/", "status": 429})
    try:
        for space in fake.flavours():
            await fake.control(session, "DELETE", "requests")
            retry = RetryPolicy(attempts=3, max_wait_s=0.05)
            with pytest.raises(ConfluenceUnreachableError, match="still HTTP 429") as caught:
                await list_pages(session, space, retry=retry)
            assert caught.value.retryable and caught.value.code == "confluence_unreachable"
            assert len(await list_requests(fake, session)) == 3
    finally:
        await fake.control(session, "DELETE", "fail")


@pytest.mark.parametrize("flavour", ["cloud", "data_center"])
async def test_wrong_credentials_are_an_auth_error_naming_the_source_not_the_token(
    fake: ConfluenceFake, session: aiohttp.ClientSession, flavour: str
) -> None:
    if flavour == "cloud":
        space = fake.cloud(token=WRONG_TOKEN)
    else:
        space = fake.data_center(pat=WRONG_TOKEN)
    with pytest.raises(ConfluenceAuthError) as caught:
        await list_pages(session, space)
    message = str(caught.value)
    assert "OPS" in message and space.base_url in message and "HTTP 401" in message
    assert WRONG_TOKEN not in message and WRONG_TOKEN not in repr(space)
    assert caught.value.code == "confluence_auth_failed"
    assert (caught.value.space_key, caught.value.base_url) == ("OPS", space.base_url)


async def test_cloud_answering_bad_credentials_with_not_found_is_still_an_auth_error(
    fake: ConfluenceFake, session: aiohttp.ClientSession
) -> None:
    # What a live Cloud site was seen to do: v2 says 404 rather than 401 (see the fake's docs).
    await fake.control(session, "POST", "config", {"auth_failure": "observed"})
    try:
        with pytest.raises(ConfluenceAuthError, match="API token of oncall-bot@kestrel.example"):
            await list_pages(session, fake.cloud(token=WRONG_TOKEN))
    finally:
        await fake.control(session, "POST", "config", {"auth_failure": "401"})


async def test_a_space_that_does_not_exist_is_not_found_in_both_flavours(
    fake: ConfluenceFake, session: aiohttp.ClientSession
) -> None:
    for space in fake.flavours(key="NOSUCH"):
        with pytest.raises(ConfluenceNotFoundError, match="NOSUCH") as caught:
            await list_pages(session, space)
        assert caught.value.code == "confluence_not_found"


async def test_a_host_with_nothing_listening_is_unreachable(
    session: aiohttp.ClientSession,
) -> None:
    base = f"http://127.0.0.1:{free_port()}/wiki"
    space = ConfluenceSpace(base, "OPS", None, ConfluenceAuth.data_center(WRONG_TOKEN))
    with pytest.raises(ConfluenceUnreachableError, match="cannot connect") as caught:
        await list_pages(session, space)
    assert base in str(caught.value) and WRONG_TOKEN not in str(caught.value)


async def test_an_edited_page_is_listed_with_its_new_version(
    fake: ConfluenceFake, session: aiohttp.ClientSession
) -> None:
    page_id = await fake.add_page(session, "Listing edit probe", "<p>one</p>")
    try:
        for space in fake.flavours():
            assert PageVersion(page_id, 1) in await list_pages(session, space)
        await fake.control(session, "POST", f"pages/{page_id}", {"body": "<p>two</p>"})
        for space in fake.flavours():
            listed = await list_pages(session, space)
            assert PageVersion(page_id, 2) in listed and PageVersion(page_id, 1) not in listed
    finally:
        await fake.purge(session, page_id)


@pytest.mark.parametrize("change", ["trash", "purge", "archive", "draft"])
async def test_a_page_trashed_purged_archived_or_made_a_draft_leaves_the_listing(
    fake: ConfluenceFake, session: aiohttp.ClientSession, change: str
) -> None:
    page_id = await fake.add_page(session, f"Gone probe {change}", "<p>x</p>")
    try:
        for space in fake.flavours():
            assert page_id in {page.page_id for page in await list_pages(session, space)}
        if change == "trash":
            await fake.control(session, "DELETE", f"pages/{page_id}")
        elif change == "purge":
            await fake.purge(session, page_id)
        else:
            await fake.control(
                session,
                "POST",
                f"pages/{page_id}",
                {"status": {"archive": "archived"}.get(change, change)},
            )
        for space in fake.flavours():
            assert page_id not in {page.page_id for page in await list_pages(session, space)}
    finally:
        await fake.purge(session, page_id)


async def test_a_base_url_that_is_not_the_sites_address_says_to_check_it(
    fake: ConfluenceFake, session: aiohttp.ClientSession
) -> None:
    # Cloud without its /wiki, Data Center with a context path it does not have.
    cloud = ConfluenceSpace(fake.site, "OPS", None, fake.cloud().auth)
    with pytest.raises(ConfluenceAuthError, match=r"https://SITE\.atlassian\.net/wiki"):
        await list_pages(session, cloud)
    data_center = ConfluenceSpace(f"{fake.site}/confluence", "OPS", None, fake.data_center().auth)
    with pytest.raises(ConfluenceNotFoundError, match="base URL is not the address"):
        await list_pages(session, data_center)
