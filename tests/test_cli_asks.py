"""Asks from the command line are answers too: recorded with their origin (``cli``) so the gap
report counts them, unless ``--no-record``. Run as a user would (a child process)."""

from __future__ import annotations

import json
import shutil
import uuid
from pathlib import Path

from rag import FastEmbedder, Settings, Store, ingest_limits, ingest_path
from tests.test_cli_truth import OFF_TOPIC
from tests.test_slack_cli import REPO, runbook


async def test_a_cli_ask_is_recorded_with_its_origin_and_counted_by_gaps_unless_no_record(
    store: Store,
    embedder: FastEmbedder,
    settings: Settings,
    database_url: str,
    unique_tenant: str,
    tmp_path: Path,
) -> None:
    shutil.copy(REPO / "corpus" / "acme" / "cache" / "redis-evictions.md", tmp_path)
    await ingest_path(
        store, embedder, tmp_path, tenant=unique_tenant, prune=False, limits=ingest_limits(settings)
    )
    env = {"DATABASE_URL": database_url}

    recorded = runbook("ask", "--tenant", unique_tenant, "--json", OFF_TOPIC, env=env)
    unrecorded = runbook(
        "ask", "--tenant", unique_tenant, "--json", "--no-record", OFF_TOPIC, env=env
    )
    gaps = runbook("gaps", "--tenant", unique_tenant, "--json", env=env)

    assert recorded.returncode == 0, recorded.stderr
    answer_id = json.loads(recorded.stdout)["answer_id"]
    assert unrecorded.returncode == 0, unrecorded.stderr
    async with store.pool.connection() as conn:
        cur = await conn.execute(
            "SELECT answer_id, entry, question FROM answers WHERE tenant_id = %(t)s",
            {"t": unique_tenant},
        )
        rows = await cur.fetchall()
    assert rows == [(uuid.UUID(answer_id), "cli", OFF_TOPIC)]
    assert gaps.returncode == 0, gaps.stderr
    totals = json.loads(gaps.stdout)["totals"]
    assert totals["questions"] == 1
    assert totals["abstained"] + totals["answered"] == 1
