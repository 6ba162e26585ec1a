"""Runbook age: frontmatter, else git, else mtime; shown on every citation, stale ones flagged."""

from __future__ import annotations

import os
import subprocess
from dataclasses import replace
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

from bot.slack.blocks import render_result
from rag import AskResult, Citation, FastEmbedder, Settings, Store, ingest_limits, ingest_path
from rag.answering.answers import ask_result_json
from rag.ingest.staleness import age_in_days
from tests.gap_fixtures import evidence

GIT_DATE = "2023-01-15T12:00:00+00:00"


def git(folder: Path, *args: str) -> None:
    env = {
        **os.environ,
        "GIT_AUTHOR_DATE": GIT_DATE,
        "GIT_COMMITTER_DATE": GIT_DATE,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
        "GIT_CONFIG_GLOBAL": os.devnull,
    }
    subprocess.run(["git", "-C", str(folder), *args], check=True, env=env, capture_output=True)


async def test_runbook_age_comes_from_frontmatter_then_git_then_file_time(
    settings: Settings, store: Store, embedder: FastEmbedder, unique_tenant: str, tmp_path: Path
) -> None:
    (tmp_path / "dated.md").write_text("---\nupdated: 2024-05-01\n---\n# Dated\n\nRestart it.\n")
    (tmp_path / "committed.md").write_text("# Committed\n\nFail over with patronictl.\n")
    git(tmp_path, "init", "-q")
    git(tmp_path, "add", "dated.md", "committed.md")
    git(tmp_path, "commit", "-q", "-m", "runbooks")
    loose = tmp_path / "loose.md"  # not committed: only its file time says anything
    loose.write_text("# Loose\n\nFlush the cache.\n")
    stamp = datetime(2022, 3, 3, 12, tzinfo=UTC).timestamp()
    os.utime(loose, (stamp, stamp))

    limits = ingest_limits(settings)
    await ingest_path(store, embedder, tmp_path, tenant=unique_tenant, prune=False, limits=limits)
    async with store.pool.connection() as conn:
        cur = await conn.execute(
            "SELECT document_id, updated, updated_source FROM documents "
            "WHERE tenant_id = %s ORDER BY document_id",
            (unique_tenant,),
        )
        rows = await cur.fetchall()
    assert rows == [
        ("committed", "2023-01-15", "git"),
        ("dated", "2024-05-01", "frontmatter"),
        ("loose", "2022-03-03", "mtime"),
    ]


def answered(updated: str) -> AskResult:
    cited = evidence("db/failover", updated=updated)
    return AskResult(
        status="answered",
        reason_code=None,
        answer="Promote the replica. [1]",
        citations=(Citation(1, "Promote the replica.", cited),),
        evidence=(cited,),
        provider="extractive",
        timings_ms={},
        tenant="acme",
        answer_id="7d5c1f1e-5b8e-4f0e-9d5e-2f4a3c1b0a99",
    )


def days_ago(days: int) -> str:
    return (datetime.now(UTC).date() - timedelta(days=days)).isoformat()


def test_every_citation_shows_its_age_and_a_warning_past_the_threshold() -> None:
    fresh = str(render_result(answered(days_ago(10))).blocks)
    assert "updated 10 days ago" in fresh and ":warning:" not in fresh

    old = str(render_result(answered(days_ago(400))).blocks)
    assert ":warning: updated 400 days ago (may be stale)" in old

    strict = str(render_result(answered(days_ago(10)), stale_after_days=7).blocks)
    assert ":warning: updated 10 days ago" in strict


def test_a_frontmatter_date_that_is_not_a_date_is_shown_as_written() -> None:
    text = str(render_result(answered("last spring")).blocks)
    assert "updated last spring" in text and ":warning:" not in text


def test_ask_json_adds_the_age_to_each_citation_as_a_new_key_only() -> None:
    result = answered(days_ago(3))
    citation = json_citations(result)[0]
    assert citation["updated_days_ago"] == 3
    old_keys = {"n", "chunk_id", "document_id", "title", "heading_path", "quote", "url"}
    assert set(citation) == old_keys | {"updated_days_ago"}
    undated = replace(result, citations=(replace(result.citations[0], evidence=evidence("x")),))
    assert json_citations(undated)[0]["updated_days_ago"] is None


def json_citations(result: AskResult) -> list[dict[str, Any]]:
    citations = ask_result_json(result)["citations"]
    assert isinstance(citations, list)
    return citations


def test_age_is_counted_in_whole_days_and_never_negative() -> None:
    today = date(2026, 12, 1)
    assert age_in_days("2026-11-30", today=today) == 1
    assert age_in_days("2026-12-01T08:00:00Z", today=today) == 0
    assert age_in_days("2027-01-01", today=today) == 0
    assert age_in_days("soon", today=today) is None
