"""Text retention: past RUNBOOK_RETAIN_TEXT_DAYS only ids, topics and counts remain."""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime, timedelta

from bot.core.alerts.memory import AlertKey, AlertMemory
from bot.core.answers.store import AnswerStore
from bot.core.gaps.report import gap_report
from bot.core.owners.feedback_reasons import record_reason
from bot.core.owners.queue import CitedQuote, queue_owner_notes
from bot.core.retention import purge_expired_text
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


async def test_a_revote_does_not_reset_the_retention_clock_of_a_comment_or_an_owner_note(
    store: Store, unique_tenant: str
) -> None:
    tenant = unique_tenant
    await add_workspace(store, "T_RET_" + tenant, tenant)
    answer_id = await plant(
        store, tenant, "failover steps?", answered=True, documents=[evidence("db/failover")]
    )

    async def vote(comment: str) -> None:
        assert await record_reason(
            store, tenant, answer_id, "U_B", reason="outdated", comment=comment, documents=[]
        )
        await queue_owner_notes(
            store,
            tenant,
            answer_id,
            "U_B",
            reason="outdated",
            comment=comment,
            question="failover steps?",
            cited=[CitedQuote("db/failover", "Check the thing.")],
            permalink=None,
            team_id="T_RET",
            enterprise_id="",
        )

    await vote("host gone")
    await backdate(store, tenant, 31)
    await vote("still wrong, the host is pg-main-2")  # a re-vote today, on a 31-day-old answer
    await purge_expired_text(store, retain_days=30)

    left = await texts_left(store, tenant)
    assert left["feedback"] == [("down", "outdated", None)]
    assert left["notes"] == [("outdated", None, None, None)]


async def test_expired_answer_facts_keep_only_topics_shared_by_two_questions(
    store: Store, unique_tenant: str
) -> None:
    tenant = unique_tenant
    await add_workspace(store, "T_RET_" + tenant, tenant)
    typed = await plant(store, tenant, "How do I rotate the vault certificate? password hunter2")
    await plant(store, tenant, "The vault certificate expired, who renews certificates?")
    assert "term:hunter2" in await topics_of(store, tenant, typed)
    await backdate(store, tenant, 29)
    await purge_expired_text(store, retain_days=30)
    assert "term:hunter2" in await topics_of(store, tenant, typed), "text still retained"

    await backdate(store, tenant, 2)
    await purge_expired_text(store, retain_days=30)
    assert await topics_of(store, tenant, typed) == ["term:vault", "term:certificate"]


async def topics_of(store: Store, tenant: str, answer_id: str) -> list[str]:
    async with store.pool.connection() as conn:
        cur = await conn.execute(
            "SELECT topics FROM answer_facts WHERE tenant_id = %s AND answer_id = %s",
            (tenant, uuid.UUID(answer_id)),
        )
        row = await cur.fetchone()
    assert row is not None
    return list(row[0])


async def test_alert_names_are_hashed_past_retention_and_a_mute_still_holds(
    store: Store, unique_tenant: str
) -> None:
    tenant = unique_tenant
    await add_workspace(store, "T_RET_" + tenant, tenant)
    name = "DiskFull on billing-db-7 (owner: jane.doe)"
    key = AlertKey(tenant, "T_RET", "C_ALERTS", f"fp-{uuid.uuid4().hex}", name)
    memory = AlertMemory(store, repeat_window_min=60)
    answer_id = await plant(store, tenant, name)
    assert await memory.claim(key, uuid.uuid4())
    await memory.record_answer(key, answer_id)
    assert await memory.mute(tenant, answer_id, "U_A") == name
    async with store.pool.connection() as conn:
        await conn.execute(
            "UPDATE alert_fingerprints SET claimed_at = claimed_at - interval '31 days' "
            "WHERE tenant_id = %s",
            (tenant,),
        )
        await conn.execute(
            "UPDATE muted_alerts SET muted_at = muted_at - interval '31 days' WHERE tenant_id = %s",
            (tenant,),
        )
    await purge_expired_text(store, retain_days=30)

    async with store.pool.connection() as conn:
        cur = await conn.execute(
            "SELECT alert_name FROM alert_fingerprints WHERE tenant_id = %(t)s "
            "UNION ALL SELECT alert_name FROM muted_alerts WHERE tenant_id = %(t)s",
            {"t": tenant},
        )
        stored = [row[0] for row in await cur.fetchall()]
    assert len(stored) == 2 and not [s for s in stored if "billing" in s or "jane" in s]
    assert await memory.is_muted(key), "the mute outlives the name's text"
