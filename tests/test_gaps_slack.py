"""The gap report after a week in Slack: fifteen questions asked by mention (nine answered, six
not, three of the answers voted 👎 with a reason), then the report an owner reads.

Slow: it ingests the acme demo corpus under a tenant of its own (about a minute of embedding).
"""

from __future__ import annotations

import shutil
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from bot.core.gaps.html import render_gap_html
from bot.core.gaps.report import GapReport, gap_report
from bot.core.owners.runbook_owners import map_owner, set_default_owner
from rag import FastEmbedder, Settings, Store
from tests.fakes.slack_api import BOT_USER_ID, SlackCall
from tests.owner_harness import CHANNEL, OwnerHarness, feedback_value, owner_harness

ACME = Path(__file__).resolve().parents[1] / "corpus" / "acme"
ELASTICSEARCH = [
    "Elasticsearch cluster health is red, what do I do?",
    "Elasticsearch shards are unassigned after a node restart",
    "ElasticsearchClusterRed is firing for the logging cluster",
]
TLS = [
    "How do I rotate the TLS certificate on the ingress?",
    "The ingress TLS certificate expired, how do we renew it?",
]
LUNCH = "what is on the lunch menu today"
PATRONI = "Patroni did not fail over by itself, how do I promote a replica by hand?"
# Answered; the first three get a 👎 with a reason, Patroni a 👍.
DOWNVOTED = {
    "How do I roll back a deploy with Argo Rollouts?": "outdated",
    "Redis is evicting keys in redis-cart, what should I check?": "missing_steps",
    "Kafka consumer lag on order events keeps growing": "outdated",
}
ANSWERED = [
    *DOWNVOTED,
    PATRONI,
    "KubePodCrashLooping is firing in the payments namespace",
    "A Kubernetes node has disk pressure, how do I free space?",
    "checkout-api p99 latency is high, where do I look?",
    "How do I post a status page update during an incident?",
    "How do I flip a feature flag kill switch in Switchboard?",
]
UNANSWERED = [*ELASTICSEARCH, *TLS, LUNCH]
OWNERS = {"team-developer-experience": "U0DEVEX", "team-platform": "S0PLATFORM"}
DEFAULT_OWNER = "C0SRE"


async def mention(bot: OwnerHarness, question: str) -> SlackCall:
    ts = f"{time.time():.6f}"
    event = {"type": "app_mention", "user": "U_ALICE", "channel": CHANNEL, "ts": ts}
    await bot.sender.event({**event, "text": f"<@{BOT_USER_ID}> {question}"}, team_id=bot.team_id)
    [post] = await bot.slack.wait_for(
        "chat.postMessage", where=lambda c: c.body.get("thread_ts") == ts
    )
    assert await bot.tasks.drain(10) == 0
    return post


async def test_a_week_of_slack_questions_yields_gaps_by_meaning_each_with_an_owner(
    settings: Settings, store: Store, embedder: FastEmbedder, tmp_path: Path
) -> None:
    corpus = tmp_path / "acme"
    shutil.copytree(ACME, corpus)
    async with owner_harness(settings, store, embedder, corpus) as bot:
        await set_default_owner(store, bot.tenant, DEFAULT_OWNER)
        for name, target in OWNERS.items():
            await map_owner(store, bot.tenant, name, target)
        for question in UNANSWERED:
            post = await mention(bot, question)
            assert "feedback" not in str(post.body.get("blocks")), question  # abstained
        for question in ANSWERED:
            post = await mention(bot, question)
            answer_id = feedback_value(post).rpartition(":")[0]
            if question in DOWNVOTED:
                view = await bot.vote_down(post, answer_id, "U_BOB")
                await bot.submit_reason(view, "U_BOB", DOWNVOTED[question])
            elif question == PATRONI:
                await bot.vote_up(post, answer_id, "U_BOB")
        report = await gap_report(
            store,
            bot.tenant,
            since=timedelta(days=7),
            stale_after_days=365,
            now=datetime.now(UTC),
        )

    assert {k: report.totals[k] for k in ("questions", "answered", "abstained")} == {
        "questions": 15,
        "answered": 9,
        "abstained": 6,
    }
    assert report.totals["downvoted_answers"] == 3 and report.totals["down"] == 3
    groups = {frozenset(g.examples): g for g in report.gaps}
    # The three Elasticsearch questions are one gap; the answered Patroni question ("cluster",
    # "fail over") closed nothing; the TLS questions are a gap of their own.
    search = groups[frozenset(ELASTICSEARCH)]
    assert search.count == 3 and "elasticsearch" in search.label
    tls = groups[frozenset(TLS)]
    assert "tls" in tls.label or "certificate" in tls.label
    # No runbook is near either: no nearest runbook, a draft instead, the tenant default owns it.
    for gap in (search, tls):
        assert gap.nearest_runbook is None and gap.draft is not None
        assert gap.owner == DEFAULT_OWNER and gap.owner_source == "default"
        assert all(f"- {q}" in gap.draft for q in gap.examples)
    # Answered then 👎: open gaps too, near the runbook they cited, owned by its owner.
    rollback = groups[frozenset(["How do I roll back a deploy with Argo Rollouts?"])]
    assert rollback.nearest_runbook == "deploys/rollback" and rollback.downvoted == 1
    assert (rollback.owner, rollback.owner_target) == ("team-developer-experience", "U0DEVEX")
    # 6 abstained + 3 answered then 👎 = 9 open questions in 6 gaps: Elasticsearch, TLS, lunch
    # and the three voted-down answers, each on a subject of its own.
    assert report.totals["open_gaps"] == 9 and len(report.gaps) == 6
    _every_row_has_an_owner(report)
    # Each 👎 counts once, against the runbook its answer opened with, with its reason.
    downvoted = {r.document_id: r.reasons for r in report.downvoted}
    assert downvoted == {
        "deploys/rollback": {"outdated": 1},
        "cache/redis-evictions": {"missing_steps": 1},
        "messaging/kafka-consumer-lag": {"outdated": 1},
    }
    page = render_gap_html(report)
    assert "No runbook covers this — write one." in page and "opened with" in page


def _every_row_has_an_owner(report: GapReport) -> None:
    owners = [
        *(g.owner for g in report.gaps),
        *(r.owner for r in report.downvoted),
        *(r.owner for r in report.stale),
        *(r.owner for r in report.runbooks),
    ]
    assert owners and all(o and o != "unowned" for o in owners)
