"""The gap report: planted unanswered questions grouped into topics; gaps that close; HTML."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from html import escape
from pathlib import Path

from bot.core.answers_store import AnswerStore
from bot.core.feedback_reasons import record_reason
from bot.core.gaps import GapReport, gap_report
from bot.core.gaps_html import render_gap_html
from rag import FastEmbedder, Settings, Store, add_workspace, ingest_limits, ingest_path
from tests import credentials
from tests.fakes.slack_api import FakeSlack
from tests.gap_fixtures import evidence, plant

REPO = Path(__file__).resolve().parents[1]
SERVICES = ("payments", "checkout-api")
PLANTED = [
    "KubePodCrashLooping firing for checkout pods, what now?",
    "Why is KubePodCrashLooping going off again on the cart service?",
    "How do I rotate the vault certificate?",
    "The vault certificate expired, who renews certificates?",
    "Where are TLS certificates for the ingress stored?",
    "payments ledger export is behind by a day",
    "refunds stuck in the payments queue",
    "what is on the lunch menu",
]


def runbook_cli(settings: Settings, *args: str) -> subprocess.CompletedProcess[str]:
    assert settings.database_url is not None
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "RUNBOOK_"))}
    env = {
        **clean,
        "DATABASE_URL": settings.database_url.get_secret_value(),
        "RUNBOOK_DATA_DIR": str(settings.data_dir),
        "PYTHONPATH": str(REPO),
    }
    return subprocess.run(
        [sys.executable, "-m", "bot", *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


async def test_gap_report_groups_planted_unanswered_questions_into_topics(
    settings: Settings, store: Store, unique_tenant: str, tmp_path: Path
) -> None:
    await add_workspace(store, "T_GAPS_" + unique_tenant, unique_tenant)  # creates the tenant
    for question in PLANTED:
        await plant(store, unique_tenant, question, known_services=SERVICES)

    page = tmp_path / "gaps.html"
    done = runbook_cli(
        settings, "gaps", "--tenant", unique_tenant, "--since", "7d", "--json", "--html", str(page)
    )
    assert done.returncode == 0, done.stderr
    assert "<svg" in page.read_text(encoding="utf-8")
    report = json.loads(done.stdout)
    groups = {g["topic"]: g["count"] for g in report["gaps"]}
    assert groups == {
        "alert:KubePodCrashLooping": 2,
        "term:certificate": 3,
        "service:payments": 2,
        "other": 1,
    }
    assert [g["topic"] for g in report["gaps"]][-1] == "other"
    certificates = next(g for g in report["gaps"] if g["topic"] == "term:certificate")
    assert set(certificates["examples"]) == set(PLANTED[2:5])
    assert report["totals"] == {
        "questions": 8,
        "answered": 0,
        "abstained": 8,
        "open_gaps": 8,
        "up": 0,
        "down": 0,
    }


async def test_a_gap_closes_when_a_later_question_on_its_topic_is_answered(
    store: Store, unique_tenant: str
) -> None:
    await add_workspace(store, "T_GAPS_" + unique_tenant, unique_tenant)
    for question in PLANTED[:2]:
        await plant(store, unique_tenant, question)
    before = await _report(store, unique_tenant)
    assert [g.topic for g in before.gaps] == ["alert:KubePodCrashLooping"]

    await plant(
        store,
        unique_tenant,
        "steps for KubePodCrashLooping",
        answered=True,
        documents=[evidence("k8s/crashloop")],
    )
    after = await _report(store, unique_tenant)
    assert after.gaps == [] and after.totals["abstained"] == 2


async def test_a_gap_closes_when_the_runbook_it_points_to_changes(
    settings: Settings, store: Store, embedder: FastEmbedder, unique_tenant: str, tmp_path: Path
) -> None:
    runbook = tmp_path / "vault" / "certificates.md"
    runbook.parent.mkdir()
    runbook.write_text("# Vault certificates\n\nRenew with `vault write pki/issue`.\n")
    limits = ingest_limits(settings)
    await ingest_path(store, embedder, tmp_path, tenant=unique_tenant, prune=False, limits=limits)
    nearest = [evidence("vault/certificates", version=1)]
    for question in PLANTED[2:4]:
        await plant(store, unique_tenant, question, documents=nearest)
    assert (await _report(store, unique_tenant)).totals["open_gaps"] == 2

    runbook.write_text(runbook.read_text() + "\n## Rotation\n\nRotate yearly with `vault`.\n")
    await ingest_path(store, embedder, tmp_path, tenant=unique_tenant, prune=False, limits=limits)
    assert (await _report(store, unique_tenant)).gaps == []


async def test_votes_and_reasons_are_counted_per_runbook(store: Store, unique_tenant: str) -> None:
    await add_workspace(store, "T_GAPS_" + unique_tenant, unique_tenant)
    cited = [evidence("db/failover", updated="2020-01-01"), evidence("db/replicas")]
    first = await plant(store, unique_tenant, "failover?", answered=True, documents=cited)
    second = await plant(store, unique_tenant, "promote?", answered=True, documents=cited[:1])
    answers = AnswerStore(store)
    assert await answers.record_feedback(unique_tenant, first, "U_A", "up")
    for user, reason in (("U_B", "outdated"), ("U_C", "outdated"), ("U_D", "unclear")):
        assert await record_reason(
            store,
            unique_tenant,
            second,
            user,
            reason=reason,
            comment=None,
            documents=["db/failover"],
        )

    report = await _report(store, unique_tenant)
    [down] = report.downvoted
    assert (down.document_id, down.down, down.reasons) == (
        "db/failover",
        3,
        {"outdated": 2, "unclear": 1},
    )
    scores = {r.document_id: (r.answered, r.up, r.down) for r in report.runbooks}
    assert scores == {"db/failover": (2, 1, 3), "db/replicas": (1, 1, 0)}


async def test_html_report_is_one_offline_page_with_charts_and_a_table_per_section(
    store: Store, unique_tenant: str
) -> None:
    await add_workspace(store, "T_GAPS_" + unique_tenant, unique_tenant)
    for question in PLANTED:
        await plant(store, unique_tenant, question, known_services=SERVICES)
    cited = [evidence("db/failover")]
    answer_id = await plant(store, unique_tenant, "failover?", answered=True, documents=cited)
    await record_reason(
        store, unique_tenant, answer_id, "U_B", reason="outdated", comment=None, documents=[]
    )

    page = render_gap_html(await _report(store, unique_tenant))
    # Gaps, downvote reasons, per runbook; nothing is stale here, so that section says so.
    assert page.startswith("<!DOCTYPE html>") and page.count("<table>") == 3
    assert page.count("<svg") == 3 and "Nothing in this period" in page
    # Offline: nothing to fetch (the SVGs only link their own glyph paths, "#...").
    assert "<script" not in page and "<link" not in page and "@import" not in page
    assert " src=" not in page and 'href="http' not in page and "url(http" not in page
    assert "KubePodCrashLooping" in page and "lunch menu" in page


async def test_html_report_draws_a_runbook_title_with_dollar_signs_literally(
    settings: Settings, store: Store, embedder: FastEmbedder, unique_tenant: str, tmp_path: Path
) -> None:
    # Between two "$" matplotlib would read math text, and "\\c" is no symbol it knows.
    title = "Clear $TMPDIR\\cache when $HOME is full"
    runbook = tmp_path / "disk" / "tmpdir.md"
    runbook.parent.mkdir()
    runbook.write_text(f"# {title}\n\nDelete files older than a day with `find`.\n")
    limits = ingest_limits(settings)
    await ingest_path(store, embedder, tmp_path, tenant=unique_tenant, prune=False, limits=limits)
    await plant(
        store, unique_tenant, "disk full?", answered=True, documents=[evidence("disk/tmpdir")]
    )

    page = render_gap_html(await _report(store, unique_tenant))
    assert escape(title) in page
    # Math text would set the words between the "$"s in italics (DejaVu Sans Oblique glyphs).
    assert "Oblique" not in page


async def _report(store: Store, tenant: str) -> GapReport:
    return await gap_report(
        store, tenant, since=timedelta(days=7), stale_after_days=365, now=datetime.now(UTC)
    )


async def test_digest_posts_the_weeks_summary_to_the_channel(
    settings: Settings, store: Store, unique_tenant: str
) -> None:
    await add_workspace(store, "T_GAPS_" + unique_tenant, unique_tenant)
    for question in PLANTED:
        await plant(store, unique_tenant, question, known_services=SERVICES)
    assert settings.database_url is not None
    async with FakeSlack() as slack:
        clean = {k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "RUNBOOK_"))}
        child = await asyncio.create_subprocess_exec(
            *(sys.executable, "-m", "bot", "digest", "--tenant", unique_tenant),
            *("--channel", "C_DIGEST"),
            cwd=REPO,
            env={
                **clean,
                "DATABASE_URL": settings.database_url.get_secret_value(),
                "RUNBOOK_DATA_DIR": str(settings.data_dir),
                "PYTHONPATH": str(REPO),
                "SLACK_BOT_TOKEN": credentials.SLACK_BOT_TOKEN,
                "SLACK_API_URL": slack.base_url,
            },
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        out, err = await asyncio.wait_for(child.communicate(), 120)
        assert child.returncode == 0, err.decode()
        [post] = slack.calls_to("chat.postMessage")
    assert post.body["channel"] == "C_DIGEST" and post.token == credentials.SLACK_BOT_TOKEN
    text = str(post.body["blocks"])
    assert "Runbook digest" in text and "*8* unanswered" in text
    assert "*KubePodCrashLooping* (alert) — 2 questions" in text
    assert "posted to C_DIGEST" in out.decode()
