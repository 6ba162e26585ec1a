"""The drafted runbook and its review modal, drawn by Chromium: the screenshots in docs/img/
come from this test, after the end-to-end test left its draft in ``.artifacts/``."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from bot.core.drafts.compose import compose_draft
from bot.core.drafts.render import render_markdown, render_sections
from bot.slack.blocks.draft_modal import Nearest, draft_modal
from tests.drafts_pages import modal_page, runbook_page
from tests.drafts_threads import SECRET, kafka_thread

REPO = Path(__file__).resolve().parents[1]
ARTIFACTS = REPO / ".artifacts"
CHROMIUM = next((f for n in ("chromium", "chromium-browser") if (f := shutil.which(n))), None)


def drafted() -> tuple[str, dict[str, object]]:
    """The end-to-end test's draft and modal when it ran, else the same thread drafted here."""
    markdown, modal = ARTIFACTS / "draft.md", ARTIFACTS / "draft-modal.json"
    if markdown.exists() and modal.exists():
        return markdown.read_text(encoding="utf-8"), json.loads(modal.read_text(encoding="utf-8"))
    draft = compose_draft(kafka_thread())
    view = draft_modal(
        tenant="acme",
        draft_id="d-0123456789ab",
        title=draft.title,
        body="\n".join(render_sections(draft)),
        owner="U_PRIYA",
        summary="Drafted from the thread",
        nearest=Nearest("messaging/kafka-consumer-lag", "Kafka consumer lag"),
    )
    return render_markdown(draft, owner="U_PRIYA"), view


def shoot(page: str, name: str, height: int) -> bytes:
    assert CHROMIUM is not None
    ARTIFACTS.mkdir(exist_ok=True)
    source, png = ARTIFACTS / f"{name}.html", ARTIFACTS / f"{name}.png"
    source.write_text(page, encoding="utf-8")
    subprocess.run(
        [
            CHROMIUM,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            f"--screenshot={png}",
            f"--window-size=1000,{height}",
            source.as_uri(),
        ],
        check=True,
        capture_output=True,
        timeout=120,
    )
    return png.read_bytes()


@pytest.mark.skipif(CHROMIUM is None, reason="no chromium binary (apt-get install chromium)")
def test_the_drafted_runbook_and_its_modal_render_in_chromium() -> None:
    markdown, view = drafted()
    page = runbook_page(markdown)
    assert "<h2>Mitigation</h2>" in page and SECRET not in page
    runbook = shoot(page, "draft-runbook", 1900)
    modal = shoot(modal_page(view), "draft-modal", 1250)
    for png in (runbook, modal):
        assert png.startswith(b"\x89PNG") and len(png) > 20_000  # a drawn page, not a blank one
