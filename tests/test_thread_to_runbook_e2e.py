"""From an incident thread to an answer: the bot abstains on the thread's first question, the
responders fix the incident in the thread, an admin drafts it into a runbook pull request,
a reviewer merges it, the source syncs, and the same question is answered from the new runbook
while the gap report shows the gap closed by it.

The drafted Markdown and the modal's blocks are kept in ``.artifacts/`` (gitignored) for a
person to look at (``docs/drafts.md`` shows them rendered)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from bot.core.gaps.report import gap_report
from bot.core.sources.runs import run_sync
from rag import FastEmbedder, IngestReport, Settings, Store, list_sources
from tests.drafts_slack import ADMIN, CHANNEL, MEMBER, draft_bot, posts_in
from tests.fakes.slack_api import SlackCall
from tests.git_repos import local_sources

ARTIFACTS = Path(__file__).resolve().parents[1] / ".artifacts"
SECRET = "Hx9-kafka-admin-7731"
QUESTION = "KafkaBrokerDiskUsageHigh on kafka-2, disk at 93%, how do I free space?"
TITLE = "[FIRING:1] KafkaBrokerDiskUsageHigh kafka-2 (prod)"
ALERT_POST: dict[str, Any] = {
    "user": "U_AM",
    "bot_id": "B_AM",
    "text": "",
    "attachments": [
        {
            "title": TITLE,
            "fallback": TITLE,
            "text": "*Alert:* KafkaBrokerDiskUsageHigh - critical\n*Description:* disk usage 93% "
            "on /var/lib/kafka of broker kafka-2 (threshold 90%)\n*Details:*\n"
            " • *alertname:* `KafkaBrokerDiskUsageHigh`\n • *instance:* `kafka-2:9308`\n"
            " • *severity:* `critical`",
        }
    ],
}
FIX = (
    "kafka-configs --bootstrap-server kafka-2:9092 --alter --entity-type topics "
    "--entity-name clickstream-raw --add-config retention.ms=172800000"
)
REPLIES = [
    ("U_PRIYA", "looking. disk on kafka-2 at 93%, growing ~1%/10min"),
    ("U_PRIYA", "`df -h /var/lib/kafka` says 93% used, 38G left"),
    (
        "U_TOMASZ",
        "which topics are biggest? "
        "`kafka-log-dirs --bootstrap-server kafka-2:9092 --describe --broker-list 2`",
    ),
    ("U_PRIYA", "clickstream-raw is 600G, the rest is small"),
    (
        "U_TOMASZ",
        "`kafka-configs --bootstrap-server kafka-2:9092 --describe --entity-type topics "
        "--entity-name clickstream-raw` shows retention.ms=604800000",
    ),
    ("U_PRIYA", "so 7 days, it should be 2. anyone know why it changed?"),
    ("U_TOMASZ", f"fyi the admin UI login is admin / password={SECRET} if you need it"),
    ("U_PRIYA", f"setting retention to 2 days:\n```\n{FIX}\n```"),
    ("U_TOMASZ", "log cleaner runs every 5 min, give it a moment"),
    ("U_PRIYA", "disk going down now, 81%"),
    (
        "U_TOMASZ",
        "verify nothing is under-replicated: "
        "`kafka-topics --bootstrap-server kafka-2:9092 --describe --under-replicated-partitions`",
    ),
    ("U_PRIYA", "none under-replicated, disk at 64%. that fixed it"),
]


def answer_in(call: SlackCall) -> str:
    return json.dumps(call.body.get("blocks") or call.body.get("text"))


@pytest.mark.slow  # a real sync and two answers through the whole app
async def test_an_incident_thread_becomes_a_merged_runbook_that_answers_its_first_question(
    settings: Settings,
    store: Store,
    embedder: FastEmbedder,
    acme_corpus: IngestReport,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("RUNBOOK_SOURCE_ALLOW_FILE", "true")
    monkeypatch.setenv("RUNBOOK_SOURCE_ALLOW_PRIVATE_NETWORKS", "true")
    settings = local_sources(settings)
    async with draft_bot(settings, store, embedder, tmp_path) as bot:
        [source] = [
            s for s in await list_sources(store, tenant="acme") if s.name.startswith("forge-")
        ]
        assert (await run_sync(store, embedder, source, settings=settings, cipher=None)).synced

        # The alert post; the first question, which the runbooks do not answer yet.
        [root] = bot.thread([], root=ALERT_POST)
        thread_ts = str(root["ts"])
        await bot.mention(thread_ts, QUESTION, user=MEMBER)
        [before] = await bot.slack.wait_for(
            "chat.postMessage", where=lambda c: c.body.get("thread_ts") == thread_ts
        )
        await bot.settle()
        # The responders solve it in the thread.
        for user, text in REPLIES:
            bot.slack.messages[CHANNEL].append(
                {
                    "type": "message",
                    "ts": f"{float(thread_ts) + len(bot.slack.messages[CHANNEL]):.6f}",
                    "thread_ts": thread_ts,
                    "user": user,
                    "text": text,
                }
            )
        bot.slack.users["U_PRIYA"] = {"real_name": "Priya Raman"}
        bot.slack.users["U_TOMASZ"] = {"real_name": "Tomasz Nowak"}

        view = await bot.shortcut(bot.slack.messages[CHANNEL][-1], user=ADMIN)
        assert await bot.submit(view) == ""
        await bot.settle()
        [told] = await bot.slack.wait_for(
            "chat.postMessage", where=lambda c: "ready for review" in str(c.body.get("text"))
        )
        [pull] = bot.forge.pulls
        [(path, markdown)] = bot.forge.changed_files(pull).items()
        open_report = await gap_report(
            store, "acme", since=timedelta(hours=1), stale_after_days=90, now=datetime.now(UTC)
        )

        bot.forge.merge(pull)
        assert (await run_sync(store, embedder, source, settings=settings, cipher=None)).synced
        await bot.mention(thread_ts, QUESTION, user=MEMBER)
        answers = await bot.slack.wait_for(
            "chat.postMessage", 3, where=lambda c: c.body.get("thread_ts") == thread_ts
        )
        await bot.settle()
        after = answers[-1]
        closed_report = await gap_report(
            store,
            "acme",
            since=timedelta(hours=1),
            stale_after_days=90,
            now=datetime.now(UTC) + timedelta(seconds=1),
        )
        thread_posts = posts_in(bot.slack, thread_ts)

    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / "draft.md").write_text(markdown, encoding="utf-8")
    (ARTIFACTS / "draft-modal.json").write_text(json.dumps(view, indent=2), encoding="utf-8")

    # Before: no runbook evidence.
    assert "No runbook evidence" in answer_in(before)
    # The pull request: the thread organised, in order, linked, the secret gone.
    assert path == "runbooks/KafkaBrokerDiskUsageHigh.md"
    assert SECRET not in markdown + pull.body and "[redacted]" not in markdown
    assert "1 secret posted in the thread was redacted" in markdown
    commands = [
        "df -h /var/lib/kafka",
        "kafka-log-dirs",
        "--describe --entity-type topics",
        FIX,
        "--under-replicated-partitions",
    ]
    positions = [markdown.index(c) for c in commands]
    assert positions == sorted(positions)
    mitigation = markdown.split("## Mitigation", 1)[1].split("## Verification", 1)[0]
    assert FIX in mitigation and "that fixed it" in mitigation
    assert "[Priya Raman](" in markdown and "archives/C_INC" in markdown
    assert "anyone know why it changed?" in markdown.split("## Open questions", 1)[1]
    assert "Ada Admin" in pull.body and "archives/C_INC" in pull.body
    assert f"/pull/{pull.number}" in told.body["text"] and told in thread_posts
    # The gap: "draft open" while the PR waits, closed by the runbook once it answers.
    [open_gap] = [
        g
        for g in open_report.gaps
        if g.thread_draft_link == f"{bot.forge.url}/acme/runbooks/pull/{pull.number}"
    ]
    assert open_gap.thread_draft == "draft open"
    assert "KafkaBrokerDiskUsageHigh" in answer_in(
        after
    ) and "No runbook evidence" not in answer_in(after)
    assert [c.closed_by for c in closed_report.closed if c.id == open_gap.id] == [
        "KafkaBrokerDiskUsageHigh"
    ]
    assert open_gap.id not in {g.id for g in closed_report.gaps}
