"""Confluence storage format, read from the shared fake Confluence's Cloud v2 API, as sections."""

from __future__ import annotations

import base64
import json
import re
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from rag.errors import EmptyRunbookError
from rag.formats import parse_confluence_storage
from rag.formats.runbook import ParsedRunbook

FAKE = Path(__file__).resolve().parents[2] / "shared" / "probes" / "confluence_fake.py"
# The fake's default Cloud credentials (its docstring).
EMAIL, API_TOKEN = "oncall-bot@kestrel.example", "kestrel-cloud-token"
FENCED = re.compile(r"^(`{3,})[^\n]*\n(.*?)\n\1$", re.MULTILINE | re.DOTALL)
STORAGE_MARKUP = re.compile(r"</?(?:ac|ri):|\bac:name\b|\bri:[a-z-]+=|CDATA|]]>")
CODE_MACRO = re.compile(
    r'<ac:structured-macro ac:name="(?:code|noformat)".*?<ac:plain-text-body>(.*?)'
    r"</ac:plain-text-body>",
    re.DOTALL,
)
CDATA = re.compile(r"<!\[CDATA\[(.*?)]]>", re.DOTALL)


@pytest.fixture(scope="module")
def confluence() -> Iterator[str]:
    """The fake's site URL; the process is stopped however the tests end."""
    if not FAKE.exists():
        pytest.skip(f"the shared fake Confluence is not at {FAKE}")
    process = subprocess.Popen(
        [sys.executable, str(FAKE), "--port", "0", "--quiet"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert process.stdout is not None
        yield process.stdout.readline().strip()
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)
        if process.stdout is not None:
            process.stdout.close()


@pytest.fixture(scope="module")
def listed_pages() -> list[dict[str, Any]]:
    if not FAKE.exists():
        pytest.skip(f"the shared fake Confluence is not at {FAKE}")
    listing = subprocess.run(
        [sys.executable, str(FAKE), "--list-pages"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    pages: list[dict[str, Any]] = json.loads(listing.stdout)
    return [page for page in pages if page["space"] == "OPS" and page["status"] == "current"]


@pytest.fixture(scope="module")
def bodies(confluence: str, listed_pages: list[dict[str, Any]]) -> dict[str, str]:
    """Every current OPS page's storage body, fetched the way a Cloud sync reads it."""
    auth = base64.b64encode(f"{EMAIL}:{API_TOKEN}".encode()).decode()
    found: dict[str, str] = {}
    for page in listed_pages:
        request = urllib.request.Request(
            f"{confluence}/wiki/api/v2/pages/{page['id']}?body-format=storage",
            headers={"Authorization": f"Basic {auth}", "Accept": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            found[page["id"]] = json.load(response)["body"]["storage"]["value"]
    return found


def converted(bodies: dict[str, str], page: dict[str, Any]) -> ParsedRunbook:
    return parse_confluence_storage(bodies[page["id"]], title=page["title"])


def prose_of(text: str) -> str:
    return FENCED.sub("", text)


def test_every_current_page_has_its_expected_section_holding_its_snippet(
    bodies: dict[str, str], listed_pages: list[dict[str, Any]]
) -> None:
    answerable = [page for page in listed_pages if page["expected_heading"]]
    assert len(answerable) >= 12
    for page in answerable:
        runbook = converted(bodies, page)
        matching = [
            section
            for section in runbook.sections
            if section.heading_path[-1] == page["expected_heading"]
            and page["expected_snippet"] in section.text
        ]
        assert matching, (page["title"], [s.heading_path for s in runbook.sections])
        assert all(section.heading_path[0] == page["title"] for section in runbook.sections)


def test_no_storage_markup_or_cdata_reaches_the_text_outside_code(
    bodies: dict[str, str], listed_pages: list[dict[str, Any]]
) -> None:
    for page in listed_pages:
        if not page["expected_heading"]:
            continue
        for section in converted(bodies, page).sections:
            assert not STORAGE_MARKUP.search(prose_of(section.text)), (page["title"], section)
            assert not any(STORAGE_MARKUP.search(entry) for entry in section.heading_path)


def test_every_code_macro_body_is_one_whole_fenced_block(
    bodies: dict[str, str], listed_pages: list[dict[str, Any]]
) -> None:
    checked = 0
    for page in listed_pages:
        storage = bodies[page["id"]]
        if not page["expected_heading"]:
            continue
        blocks = [
            match[2]
            for section in converted(bodies, page).sections
            for match in FENCED.finditer(section.text)
        ]
        for macro_body in CODE_MACRO.findall(storage):
            # A body holding "]]>" is stored as two CDATA sections; joined they are the code.
            code = "".join(CDATA.findall(macro_body)).strip("\n")
            assert code in blocks, (page["title"], code)
            checked += 1
    assert checked >= 15


def test_a_literal_cdata_end_inside_code_survives_the_split_sections(
    bodies: dict[str, str], listed_pages: list[dict[str, Any]]
) -> None:
    [page] = [p for p in listed_pages if p["title"].startswith("Auth gateway")]
    [section] = [
        s
        for s in converted(bodies, page).sections
        if s.heading_path[-1] == "Re-publish IdP metadata"
    ]
    assert "<Extensions><![CDATA[rotation=2025-03]]></Extensions>" in section.text
    assert section.text.startswith("metadata.xml (excerpt)\n\n```xml\n<EntityDescriptor")


def test_panels_expands_tasks_layouts_and_fallbacks_keep_their_text_once(
    bodies: dict[str, str], listed_pages: list[dict[str, Any]]
) -> None:
    by_title = {
        page["title"]: converted(bodies, page) for page in listed_pages if page["expected_heading"]
    }
    home = {s.heading_path: s.text for s in by_title["Operations Home"].sections}
    # The page repeats its title as an h1: it is the root, not a section of its own.
    assert ("Operations Home", "Escalation") in home
    assert home[("Operations Home",)].count("Info: Keep them honest") == 1
    assert (
        "| Week | Primary | Secondary | Duty manager |\n| --- |"
        in home[("Operations Home", "On-call rota")]
    )
    assert "Escalation owner: @user." in home[("Operations Home", "Escalation")]
    failover = {
        s.heading_path[-1]: s.text for s in by_title["Postgres failover (payments-db)"].sections
    }
    assert failover["Before you start"].startswith(
        "1. Tell #inc-payments you are failing over\n2. "
    )
    assert (
        '`kubectl -n payments patch cronjob recon -p \'{"spec":{"suspend":true}}\'`'
        in failover["Before you start"]
    )
    assert "Note: pgbouncer follows the leader" in failover["Promote a replica"]
    payments = next(t for t in by_title if t.startswith("Payments API"))
    mitigation = {s.heading_path[-1]: s.text for s in by_title[payments].sections}["Mitigation"]
    assert "Warning: One pod at a time" in mitigation
    assert "Drain a single bad pod (4 steps)\n\n1. Find the pod" in mitigation
    related = {s.heading_path[-1]: s.text for s in by_title[payments].sections}["Related"]
    # Links to pages read as the page titles; the Jira macro is dropped.
    assert related == (
        "- Postgres failover (payments-db)\n- Restore payments-db to a point in time\n"
        "- Post-incident review:"
    )
    sms = next(t for t in by_title if t.startswith("Notifications"))
    text = "\n".join(s.text for s in by_title[sms].sections)
    assert text.count("We do not fail over for delays under 15 minutes") == 1
    assert text.count("SignalPost rate-limits us to 200 messages/s") == 1
    assert "DEGRADED Delivery-day texts" in text
    assert "🔥" not in text and ":fire:" not in text


def test_entities_are_decoded_and_invisible_characters_dropped_from_prose(
    bodies: dict[str, str], listed_pages: list[dict[str, Any]]
) -> None:
    [page] = [p for p in listed_pages if p["title"].startswith("Tracking ingest")]
    runbook = converted(bodies, page)
    paths = [section.heading_path[-1] for section in runbook.sections]
    assert "Secret rotation & re-keying" in paths and "What you’ll see" in paths
    text = "\n".join(section.text for section in runbook.sections)
    assert "HMAC-SHA256" in text and "\u200b" not in text and "\xa0" not in text
    assert "“In transit” for hours…" in text


def test_malformed_page_keeps_every_part_in_order(
    bodies: dict[str, str], listed_pages: list[dict[str, Any]]
) -> None:
    [page] = [p for p in listed_pages if p["title"] == "Redis cache eviction storm"]
    sections = {s.heading_path[-1]: s.text for s in converted(bodies, page).sections}
    assert list(sections) == ["Symptoms", "Diagnosis", "Mitigation", "Follow-up"]
    assert "no TTL & that is the bug" in sections["Diagnosis"]
    assert (
        "- switch to `volatile-lru` so only keys with a TTL are evicted\n- then give it"
        in (sections["Mitigation"])
    )
    assert "Set the policy first before raising memory:" in sections["Mitigation"]


def test_an_empty_page_has_nothing_to_index(
    bodies: dict[str, str], listed_pages: list[dict[str, Any]]
) -> None:
    [page] = [p for p in listed_pages if p["title"] == "Edge CDN cache purge"]
    with pytest.raises(EmptyRunbookError):
        converted(bodies, page)


def test_the_300_kb_page_converts_within_a_second_on_a_quiet_machine(
    bodies: dict[str, str], listed_pages: list[dict[str, Any]]
) -> None:
    [page] = [p for p in listed_pages if p["title"].startswith("Route planner reference")]
    assert len(bodies[page["id"]]) > 290_000
    started = time.perf_counter()
    runbook = converted(bodies, page)
    elapsed = time.perf_counter() - started
    assert len(runbook.sections) > 170
    # Under a second on a quiet machine (0.1 s measured); the bound leaves room for a busy one.
    assert elapsed < 3.0, elapsed
