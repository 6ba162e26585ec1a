"""Text retention: past RUNBOOK_RETAIN_TEXT_DAYS only ids, topics and counts remain."""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime, timedelta

from bot.core.answers_store import AnswerStore
from bot.core.feedback_reasons import record_reason
from bot.core.gaps import gap_report
from bot.core.owner_queue import CitedQuote, queue_owner_notes
from rag import FastEmbedder, Settings, Store, add_workspace
from tests.gap_fixtures import evidence, plant
from tests.test_gaps import runbook_cli

QUESTION = "How do I rotate the vault certificate?"


async def backdate(store: Store, tenant: str, days: int) -> None:
    async with store.pool.connection() as conn:
        for table, column in (
            ("answers", "created_at"),
            ("answer_facts", "created_at"),
            ("feedback", "at"),
            ("owner_notifications", "created_at"),
        ):
            await conn.execute(
                f"UPDATE {table} SET {column} = {column} - make_interval(days => %s) "  # noqa: S608
                "WHERE tenant_id = %s",
                (days, tenant),
            )


async def texts_left(store: Store, tenant: str) -> dict[str, object]:
    async with store.pool.connection() as conn:
        answers = await (
            await conn.execute("SELECT count(*) FROM answers WHERE tenant_id = %s", (tenant,))
        ).fetchone()
        feedback = await (
            await conn.execute(
                "SELECT value, reason, comment FROM feedback WHERE tenant_id = %s ORDER BY value",
                (tenant,),
            )
        ).fetchall()
        notes = await (
            await conn.execute(
                "SELECT reason, question, quote, comment FROM owner_notifications "
                "WHERE tenant_id = %s",
                (tenant,),
            )
        ).fetchall()
    assert answers is not None
    return {"answers": answers[0], "feedback": feedback, "notes": notes}


async def test_text_is_gone_after_retention_while_topics_and_counts_remain(
    settings: Settings, store: Store, embedder: FastEmbedder, unique_tenant: str
) -> None:
    tenant = unique_tenant
    await add_workspace(store, "T_RET_" + tenant, tenant)
    await plant(store, tenant, QUESTION, embedder=embedder)
    await plant(
        store, tenant, "The vault certificate expired, who renews certificates?", embedder=embedder
    )
    answer_id = await plant(
        store, tenant, "failover steps?", answered=True, documents=[evidence("db/failover")]
    )
    assert await AnswerStore(store).record_feedback(tenant, answer_id, "U_A", "up")
    assert await record_reason(
        store, tenant, answer_id, "U_B", reason="outdated", comment="host gone", documents=[]
    )
    await queue_owner_notes(
        store,
        tenant,
        answer_id,
        "U_B",
        reason="outdated",
        comment="host gone",
        question="failover steps?",
        cited=[CitedQuote("db/failover", "Check the thing.")],
        permalink=None,
        team_id="T_RET",
        enterprise_id="",
    )
    await backdate(store, tenant, 29)
    done = runbook_cli(settings, "retention", "purge", "--json")
    assert done.returncode == 0, done.stderr
    assert (await texts_left(store, tenant))["answers"] == 3  # 29 days: still within 30

    await backdate(store, tenant, 2)
    done = runbook_cli(settings, "retention", "purge", "--json")
    assert done.returncode == 0, done.stderr
    purged = json.loads(done.stdout)
    assert purged["retain_text_days"] == 30 and purged["answers"] >= 3
    assert await texts_left(store, tenant) == {
        "answers": 0,
        "feedback": [("down", "outdated", None), ("up", None, None)],
        "notes": [("outdated", None, None, None)],
    }

    report = await gap_report(
        store, tenant, since=timedelta(days=60), stale_after_days=365, now=datetime.now(UTC)
    )
    assert report.totals == {
        "questions": 3,
        "answered": 1,
        "abstained": 2,
        "downvoted_answers": 0,
        "open_gaps": 2,
        "open_groups": 1,
        "up": 1,
        "down": 1,
    }
    [gap] = report.gaps  # grouped by the vectors kept with the facts, not by their text
    assert (gap.count, gap.examples) == (2, [])
    [down] = report.downvoted
    assert (down.document_id, down.reasons) == ("db/failover", {"outdated": 1})
    async with store.pool.connection() as conn:  # ids remain: the facts still name the answer
        cur = await conn.execute(
            "SELECT status, documents FROM answer_facts WHERE tenant_id = %s AND answer_id = %s",
            (tenant, uuid.UUID(answer_id)),
        )
        assert await cur.fetchone() == ("answered", ["db/failover"])
