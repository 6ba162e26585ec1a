"""The gap page as a reader sees it: ``runbook gaps --html`` rendered by headless Chromium.

The screenshot and the page are kept in ``.artifacts/`` at the repository root (gitignored), so
a person can look at what the test looked at. Skipped only when no Chromium is installed
(``.ci/run`` installs it where apt-get works).
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from PIL import Image, ImageStat

from bot.core.owners.feedback_reasons import record_reason
from bot.core.owners.runbook_owners import set_default_owner
from rag import FastEmbedder, Settings, Store, add_workspace
from tests.gap_fixtures import evidence, plant
from tests.test_gaps import CERTIFICATES, ELASTICSEARCH, LUNCH, REPO, runbook_cli

ARTIFACTS = REPO / ".artifacts"
CHROMIUM = next(
    (found for name in ("chromium", "chromium-browser") if (found := shutil.which(name))), None
)
WIDTH, HEIGHT = 1280, 2000


def screenshot(page: Path, png: Path) -> None:
    """``page`` as Chromium draws it at WIDTH × HEIGHT, into ``png``."""
    assert CHROMIUM is not None
    subprocess.run(
        [
            CHROMIUM,
            "--headless",
            "--no-sandbox",  # CI containers run as root, where Chromium's sandbox cannot start
            "--disable-gpu",
            "--hide-scrollbars",
            f"--screenshot={png}",
            f"--window-size={WIDTH},{HEIGHT}",
            page.as_uri(),
        ],
        check=True,
        capture_output=True,
        timeout=120,
    )


@pytest.mark.skipif(CHROMIUM is None, reason="no chromium binary (apt-get install chromium)")
async def test_the_gap_page_renders_in_chromium_with_titled_axes_whole_labels_and_local_dates(
    settings: Settings, store: Store, embedder: FastEmbedder, unique_tenant: str
) -> None:
    await add_workspace(store, "T_GAPS_" + unique_tenant, unique_tenant)
    await set_default_owner(store, unique_tenant, "#sre-runbooks")
    for question in [*ELASTICSEARCH, *CERTIFICATES, LUNCH]:
        await plant(store, unique_tenant, question, embedder=embedder)
    long_name = "db/failover-with-a-rather-long-runbook-name-that-must-not-be-cut"
    answer_id = await plant(
        store, unique_tenant, "failover?", answered=True, documents=[evidence(long_name)]
    )
    await record_reason(
        store, unique_tenant, answer_id, "U_B", reason="outdated", comment=None, documents=[]
    )
    ARTIFACTS.mkdir(exist_ok=True)
    page, png = ARTIFACTS / "gaps.html", ARTIFACTS / "gaps.png"
    png.unlink(missing_ok=True)

    done = runbook_cli(settings, "gaps", "--tenant", unique_tenant, "--html", str(page))
    assert done.returncode == 0, done.stderr
    screenshot(page, png)

    html = page.read_text(encoding="utf-8")
    for axis in ("unanswered questions", "not-helpful votes", "answers and votes"):
        assert f"<!-- {axis} -->" in html  # matplotlib keeps an axis title's text as a comment
    assert "…" not in html and f"<td>{long_name}</td>" in html
    # "not helpful" is red even though nothing was helpful (no green "helpful" bar to skip).
    assert "fill: #c44e52" in html and "fill: #55a868" not in html
    assert '<span class="nw">#sre-runbooks</span>' in html  # owners never break at a hyphen
    assert re.search(r"\d{4}-\d\d-\d\dT\d\d", html) is None  # local dates, not ISO times
    with Image.open(png) as shot:
        assert shot.size == (WIDTH, HEIGHT)
        grey = shot.convert("L")
        # A blank or all-error page is one flat colour; charts, text and tables are not.
        assert ImageStat.Stat(grey).stddev[0] > 20
        # The page fills the first screen, not a sliver at its top.
        assert ImageStat.Stat(grey.crop((0, HEIGHT // 2, WIDTH, HEIGHT))).extrema[0][0] < 128
    assert png.stat().st_size > 50_000
