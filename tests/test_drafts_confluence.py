"""A draft delivered to a Confluence source: a draft page under the space's "Runbooks" page,
through Cloud REST v2 and Data Center REST v1, read back from the shared fake Confluence."""

from __future__ import annotations

import base64

import aiohttp
import pytest

from bot.core.drafts.change import Submission
from bot.core.drafts.deliver import deliver
from rag import SourceAccess, Store, add_source
from tests.fakes.confluence import (
    API_TOKEN,
    EMAIL,
    PAT,
    RUNBOOKS_PAGE,
    running_fake,
    with_draft_pages,
)

MARKDOWN = (
    '---\ntitle: "KafkaBrokerDiskUsageHigh"\n---\n\n# KafkaBrokerDiskUsageHigh\n\n'
    "## Mitigation\n\n1. setting retention\n\n   ```\n   kafka-configs --alter\n   ```\n"
)

# The fake listens on 127.0.0.1, which only the operator's private-network allowance reaches.
LOOPBACK = SourceAccess(allow_private_networks=True)


def submission(tenant: str) -> Submission:
    return Submission(
        tenant=tenant,
        draft_id="d-c0ffee000001",
        title="KafkaBrokerDiskUsageHigh (drafted)",
        markdown=MARKDOWN,
        section="",
        destination="new",
        thread_link="https://acme.slack.com/archives/C_INC/p1",
        asked_by="Priya",
        redactions=0,
    )


@pytest.mark.parametrize("flavour", ["cloud", "data_center"])
async def test_a_draft_becomes_a_draft_page_under_the_runbooks_page(
    store: Store, unique_tenant: str, flavour: str
) -> None:
    with running_fake() as shared:
        async with with_draft_pages(shared) as fake, aiohttp.ClientSession() as session:
            cloud = flavour == "cloud"
            settings = {
                "base_url": fake.cloud_url if cloud else fake.data_center_url,
                "space": "OPS",
                "label": None,
                **({"email": EMAIL} if cloud else {}),
            }
            await add_source(
                store,
                tenant=unique_tenant,
                name="ops",
                kind="confluence",
                settings=settings,
                credential={"token": API_TOKEN} if cloud else {"pat": PAT},
                webhook_secret={"secret": "s"},
            )
            delivered, document = await deliver(
                store, submission(unique_tenant), access=LOOPBACK, cipher=None
            )
            page_id = delivered.path
            basic = base64.b64encode(f"{EMAIL}:{API_TOKEN}".encode()).decode()
            auth = {"Authorization": f"Basic {basic}"}
            url = f"{shared.cloud_url}/api/v2/pages/{page_id}?get-draft=true&body-format=storage"
            async with session.get(url, headers=auth) as response:
                page = await response.json()
            async with session.get(
                f"{shared.cloud_url}/api/v2/spaces/{page['spaceId']}/pages?status=current",
                headers=auth,
            ) as response:
                current = [p["id"] for p in (await response.json())["results"]]

    assert delivered.kind == "confluence" and document is None
    assert (page["status"], page["title"]) == ("draft", "KafkaBrokerDiskUsageHigh (drafted)")
    assert page["parentId"] == RUNBOOKS_PAGE
    storage = page["body"]["storage"]["value"]
    assert "<h2>Mitigation</h2>" in storage and "kafka-configs --alter" in storage
    assert "title:" not in storage  # no frontmatter in a page body
    assert page_id not in current  # a draft, not a published page
    assert str(page_id) in delivered.link
