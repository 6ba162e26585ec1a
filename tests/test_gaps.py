"""The gap report: unanswered questions grouped by meaning (real embedding model), gaps that
close, owners on every row, nearest runbooks only when near, drafts, votes, staleness, HTML."""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from html import escape
from pathlib import Path

from bot.core.answers.store import AnswerStore
from bot.core.gaps.html import render_gap_html
from bot.core.gaps.report import Gap, GapReport, gap_report
from bot.core.gaps.thresholds import load_gap_thresholds
from bot.core.owners.feedback_reasons import record_reason
from bot.core.owners.runbook_owners import map_owner, set_default_owner
from rag import FastEmbedder, Settings, Store, add_workspace, ingest_limits, ingest_path
from tests import credentials
from tests.fakes.slack_api import FakeSlack
from tests.gap_fixtures import evidence, plant

REPO = Path(__file__).resolve().parents[1]
ELASTICSEARCH = [
    "Elasticsearch cluster health is red, what do I do?",
    "Elasticsearch shards are unassigned after a node restart",
    "ElasticsearchClusterRed is firing for the logging cluster",
]
CERTIFICATES = [
    "How do I rotate the vault certificate?",
    "The vault certificate expired, who renews certificates?",
]
LUNCH = "what is on the lunch menu"
PATRONI = "Patroni cluster has no leader, how do I fail over?"
THRESHOLDS = load_gap_thresholds()
NEAR = THRESHOLDS.nearest_similarity + 0.1
FAR = THRESHOLDS.nearest_similarity - 0.1


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


async def _report(
    store: Store, tenant: str, *, now: datetime | None = None, owner: str | None = None
) -> GapReport:
    return await gap_report(
        store,
        tenant,
        since=timedelta(days=7),
        stale_after_days=365,
        now=now or datetime.now(UTC),
        owner=owner,
    )


def _gap_of(report: GapReport, question: str) -> Gap:
    return next(g for g in report.gaps if question in g.examples)


async def _plant_unanswered(store: Store, embedder: FastEmbedder, tenant: str) -> None:
    for question in [*ELASTICSEARCH, *CERTIFICATES, LUNCH]:
        await plant(store, tenant, question, embedder=embedder)


async def test_questions_on_one_subject_form_one_gap_labelled_by_their_distinctive_terms(
    store: Store, embedder: FastEmbedder, unique_tenant: str
) -> None:
    await add_workspace(store, "T_GAPS_" + unique_tenant, unique_tenant)
    await _plant_unanswered(store, embedder, unique_tenant)

    report = await _report(store, unique_tenant)
    groups = sorted(sorted(g.examples) for g in report.gaps)
    assert groups == sorted([sorted(ELASTICSEARCH), sorted(CERTIFICATES), [LUNCH]])
    search = _gap_of(report, ELASTICSEARCH[0])
    assert search.count == 3 and search.kind == "terms"
    assert "elasticsearch" in search.label and "ElasticsearchClusterRed" in search.label
    assert "certificate" in _gap_of(report, CERTIFICATES[0]).label
    assert _gap_of(report, LUNCH).count == 1
    assert report.totals["open_gaps"] == 6 and report.totals["open_groups"] == 3


async def test_a_shared_generic_word_does_not_make_a_group(
    store: Store, embedder: FastEmbedder, unique_tenant: str
) -> None:
    await add_workspace(store, "T_GAPS_" + unique_tenant, unique_tenant)
    for question in (ELASTICSEARCH[0], PATRONI, "Kafka cluster lost a broker, what now?"):
        await plant(store, unique_tenant, question, embedder=embedder)
    report = await _report(store, unique_tenant)
    assert [g.count for g in report.gaps] == [1, 1, 1]


async def test_an_answer_closes_only_the_gap_it_belongs_to(
    store: Store, embedder: FastEmbedder, unique_tenant: str
) -> None:
    await add_workspace(store, "T_GAPS_" + unique_tenant, unique_tenant)
    await _plant_unanswered(store, embedder, unique_tenant)
    answers = AnswerStore(store)
    patroni = await plant(
        store,
        unique_tenant,
        PATRONI,
        answered=True,
        documents=[evidence("database/primary-failover", cosine=NEAR)],
        embedder=embedder,
    )
    assert await answers.record_feedback(unique_tenant, patroni, "U_A", "up")
    report = await _report(store, unique_tenant)
    assert _gap_of(report, ELASTICSEARCH[0]).count == 3  # "cluster" is not the subject

    fixed = await plant(
        store,
        unique_tenant,
        "Elasticsearch cluster is red again, which shards are unassigned?",
        answered=True,
        documents=[evidence("search/elasticsearch-red", cosine=NEAR)],
        embedder=embedder,
    )
    assert await answers.record_feedback(unique_tenant, fixed, "U_A", "up")
    report = await _report(store, unique_tenant)
    assert all(e not in g.examples for g in report.gaps for e in ELASTICSEARCH)
    assert _gap_of(report, CERTIFICATES[0]).count == 2


async def test_an_answer_without_a_vote_closes_its_gap_only_after_quiet_days(
    store: Store, embedder: FastEmbedder, unique_tenant: str
) -> None:
    await add_workspace(store, "T_GAPS_" + unique_tenant, unique_tenant)
    for question in CERTIFICATES:
        await plant(store, unique_tenant, question, embedder=embedder)
    await plant(
        store,
        unique_tenant,
        "How do we renew the vault certificate before it expires?",
        answered=True,
        documents=[evidence("vault/certificates", cosine=NEAR)],
        embedder=embedder,
    )
    assert (await _report(store, unique_tenant)).totals["open_gaps"] == 2
    later = datetime.now(UTC) + timedelta(days=4)
    assert (await _report(store, unique_tenant, now=later)).gaps == []


async def test_an_answer_voted_down_is_an_open_gap_not_a_closed_one(
    store: Store, embedder: FastEmbedder, unique_tenant: str
) -> None:
    await add_workspace(store, "T_GAPS_" + unique_tenant, unique_tenant)
    await plant(store, unique_tenant, CERTIFICATES[0], embedder=embedder)
    answered = await plant(
        store,
        unique_tenant,
        CERTIFICATES[1],
        answered=True,
        embedder=embedder,
    )
    assert await AnswerStore(store).record_feedback(unique_tenant, answered, "U_B", "down")
    [gap] = (await _report(store, unique_tenant)).gaps
    assert (gap.count, gap.abstained, gap.downvoted) == (2, 1, 1)


async def test_a_gap_closes_when_the_runbook_it_points_to_changes(
    settings: Settings, store: Store, embedder: FastEmbedder, unique_tenant: str, tmp_path: Path
) -> None:
    runbook = tmp_path / "vault" / "certificates.md"
    runbook.parent.mkdir()
    runbook.write_text("# Vault certificates\n\nRenew with `vault write pki/issue`.\n")
    limits = ingest_limits(settings)
    await ingest_path(store, embedder, tmp_path, tenant=unique_tenant, prune=False, limits=limits)
    nearest = [evidence("vault/certificates", version=1, cosine=NEAR)]
    for question in CERTIFICATES:
        await plant(store, unique_tenant, question, documents=nearest, embedder=embedder)
    assert (await _report(store, unique_tenant)).totals["open_gaps"] == 2

    runbook.write_text(runbook.read_text() + "\n## Rotation\n\nRotate yearly with `vault`.\n")
    await ingest_path(store, embedder, tmp_path, tenant=unique_tenant, prune=False, limits=limits)
    assert (await _report(store, unique_tenant)).gaps == []


def _owned_corpus(root: Path) -> Path:
    files = {
        "vault/certificates.md": "---\nowner: team-security\nservice: vault\n---\n"
        "# Vault certificates\n\nRenew with `vault write pki/issue`.\n",
        "search/indexing.md": "---\nowner: team-search\nservice: search\n---\n"
        "# Search indexing lag\n\nCheck the indexer queue.\n",
        "db/failover.md": "---\nservice: postgres\nupdated: 2020-01-01\n---\n"
        "# Postgres failover\n\nPromote a replica with `patronictl failover`.\n",
    }
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


async def test_every_row_has_an_owner_runbook_then_service_then_tenant_default(
    settings: Settings, store: Store, embedder: FastEmbedder, unique_tenant: str, tmp_path: Path
) -> None:
    corpus = _owned_corpus(tmp_path / "corpus")
    limits = ingest_limits(settings)
    await ingest_path(store, embedder, corpus, tenant=unique_tenant, prune=False, limits=limits)
    await set_default_owner(store, unique_tenant, "#sre-runbooks")
    await map_owner(store, unique_tenant, "team-security", "U0SECURITY")
    near_vault = [evidence("vault/certificates", cosine=NEAR)]
    for question in CERTIFICATES:  # near a runbook: its owner
        await plant(store, unique_tenant, question, documents=near_vault, embedder=embedder)
    far_search = [evidence("search/indexing", cosine=FAR)]
    for question in ELASTICSEARCH[:2]:  # no near runbook, scoped to a service: its owner
        await plant(
            store,
            unique_tenant,
            question,
            documents=far_search,
            embedder=embedder,
            service="search",
        )
    await plant(store, unique_tenant, LUNCH, embedder=embedder)  # neither: the tenant default
    failover = await plant(
        store,
        unique_tenant,
        PATRONI,
        answered=True,
        documents=[evidence("db/failover", cosine=NEAR)],
        embedder=embedder,
    )
    assert await AnswerStore(store).record_feedback(unique_tenant, failover, "U_C", "down")

    report = await _report(store, unique_tenant)
    owners = {g.examples[0]: (g.owner, g.owner_source) for g in report.gaps}
    assert owners[CERTIFICATES[1]] == ("team-security", "runbook")
    assert owners[ELASTICSEARCH[1]] == ("team-search", "service")
    assert owners[LUNCH] == ("#sre-runbooks", "default")
    assert owners[PATRONI] == ("#sre-runbooks", "default")  # its runbook names no owner
    owners_of_rows = [
        *(g.owner for g in report.gaps),
        *(r.owner for r in report.downvoted),
        *(r.owner for r in report.stale),
        *(r.owner for r in report.runbooks),
    ]
    assert len(owners_of_rows) >= 6 and all(owners_of_rows)
    assert report.owner_targets["team-security"] == "U0SECURITY"

    mine = await _report(store, unique_tenant, owner="U0SECURITY")
    assert [g.owner for g in mine.gaps] == ["team-security"] and mine.downvoted == []


async def test_a_far_runbook_is_not_shown_and_the_gap_gets_a_draft_the_cli_prints(
    settings: Settings, store: Store, embedder: FastEmbedder, unique_tenant: str
) -> None:
    await add_workspace(store, "T_GAPS_" + unique_tenant, unique_tenant)
    unrelated = [evidence("payments/gateway-5xx", cosine=FAR)]
    for question in CERTIFICATES:
        await plant(store, unique_tenant, question, documents=unrelated, embedder=embedder)
    [gap] = (await _report(store, unique_tenant)).gaps
    assert gap.nearest_runbook is None and gap.nearest_similarity == round(FAR, 3)

    done = runbook_cli(settings, "gaps", "--tenant", unique_tenant, "--draft", gap.id)
    assert done.returncode == 0, done.stderr
    draft = done.stdout
    assert draft.startswith("---\ntitle: ") and "# " in draft
    assert "## Symptoms" in draft and "## Diagnosis\n\n## Mitigation\n" in draft
    assert all(f"- {q}" in draft for q in CERTIFICATES)
    missing = runbook_cli(settings, "gaps", "--tenant", unique_tenant, "--draft", "g-00000000")
    assert missing.returncode == 2 and "no open gap" in missing.stderr


async def test_a_near_runbook_is_shown_with_its_similarity(
    settings: Settings, store: Store, embedder: FastEmbedder, unique_tenant: str, tmp_path: Path
) -> None:
    corpus = _owned_corpus(tmp_path / "corpus")
    limits = ingest_limits(settings)
    await ingest_path(store, embedder, corpus, tenant=unique_tenant, prune=False, limits=limits)
    for question in CERTIFICATES:
        near = [evidence("vault/certificates", cosine=NEAR), evidence("payments/x", cosine=FAR)]
        await plant(store, unique_tenant, question, documents=near, embedder=embedder)
    [gap] = (await _report(store, unique_tenant)).gaps
    assert gap.nearest_runbook == "vault/certificates" and gap.draft is None


async def test_a_downvote_counts_against_the_runbook_the_answer_opened_with(
    store: Store, unique_tenant: str
) -> None:
    await add_workspace(store, "T_GAPS_" + unique_tenant, unique_tenant)
    cited = [evidence("db/failover", updated="2020-01-01"), evidence("db/replicas")]
    first = await plant(store, unique_tenant, "failover?", answered=True, documents=cited)
    second = await plant(store, unique_tenant, "promote?", answered=True, documents=cited)
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
            documents=["db/replicas"],
        )

    report = await _report(store, unique_tenant)
    [down] = report.downvoted
    assert (down.document_id, down.down, down.reasons) == (
        "db/failover",
        3,
        {"outdated": 2, "unclear": 1},
    )
    scores = {r.document_id: (r.answered, r.up, r.down) for r in report.runbooks}
    assert scores == {"db/failover": (2, 1, 3), "db/replicas": (2, 0, 0)}
    assert "opened with" in report.vote_rule


async def test_an_old_runbook_is_stale_only_when_downvoted_answers_or_unanswered_questions_cite_it(
    settings: Settings, store: Store, embedder: FastEmbedder, unique_tenant: str, tmp_path: Path
) -> None:
    root = tmp_path / "corpus"
    for name in ("old-quiet", "old-downvoted", "old-near"):
        path = root / f"{name}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"---\nupdated: 2020-01-01\n---\n# {name}\n\nSteps for {name}.\n")
    limits = ingest_limits(settings)
    await ingest_path(store, embedder, root, tenant=unique_tenant, prune=False, limits=limits)
    for _ in range(3):
        await plant(
            store, unique_tenant, "quiet?", answered=True, documents=[evidence("old-quiet")]
        )
    voted = await plant(
        store, unique_tenant, "voted?", answered=True, documents=[evidence("old-downvoted")]
    )
    assert await AnswerStore(store).record_feedback(unique_tenant, voted, "U_A", "down")
    await plant(store, unique_tenant, "near?", documents=[evidence("old-near", cosine=NEAR)])
    await plant(store, unique_tenant, "far?", documents=[evidence("old-quiet", cosine=FAR)])

    report = await _report(store, unique_tenant)
    stale = {
        r.document_id: (r.answers, r.downvoted_answers, r.abstained_near) for r in report.stale
    }
    assert stale == {"old-downvoted": (1, 1, 0), "old-near": (0, 0, 1)}
    assert [r.document_id for r in report.stale] == ["old-downvoted", "old-near"]


async def test_html_report_is_one_offline_page_with_titled_charts_and_an_owner_column(
    store: Store, embedder: FastEmbedder, unique_tenant: str
) -> None:
    await add_workspace(store, "T_GAPS_" + unique_tenant, unique_tenant)
    await set_default_owner(store, unique_tenant, "#sre-runbooks")
    await _plant_unanswered(store, embedder, unique_tenant)
    cited = [evidence("db/failover-with-a-rather-long-runbook-name-that-must-not-be-cut")]
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
    assert "ElasticsearchClusterRed" in page and "lunch menu" in page
    assert page.count("<th>Owner</th>") == 3 and "#sre-runbooks" in page
    assert "<!-- unanswered questions -->" in page  # an axis title (text kept as an SVG comment)
    assert "…" not in page and 'runbook gaps <span class="nw">--draft g-' in page
    assert "opened with" in page
    assert re.search(r"\d{4}-\d\d-\d\dT\d\d", page) is None  # no raw ISO times: local dates


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


async def test_digest_sends_each_owner_their_own_rows(
    settings: Settings, store: Store, embedder: FastEmbedder, unique_tenant: str, tmp_path: Path
) -> None:
    corpus = _owned_corpus(tmp_path / "corpus")
    limits = ingest_limits(settings)
    await ingest_path(store, embedder, corpus, tenant=unique_tenant, prune=False, limits=limits)
    await set_default_owner(store, unique_tenant, "C0SRE")
    await map_owner(store, unique_tenant, "team-security", "U0SECURITY")
    near_vault = [evidence("vault/certificates", cosine=NEAR)]
    for question in CERTIFICATES:
        await plant(store, unique_tenant, question, documents=near_vault, embedder=embedder)
    for question in ELASTICSEARCH:
        await plant(store, unique_tenant, question, embedder=embedder)
    assert settings.database_url is not None
    async with FakeSlack() as slack:
        clean = {k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "RUNBOOK_"))}
        child = await asyncio.create_subprocess_exec(
            *(sys.executable, "-m", "bot", "digest", "--tenant", unique_tenant),
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
        posts = {
            c.body["channel"]: str(c.body["blocks"]) for c in slack.calls_to("chat.postMessage")
        }
    assert set(posts) == {"U0SECURITY", "C0SRE"}
    assert "certificate" in posts["U0SECURITY"] and "lasticsearch" not in posts["U0SECURITY"]
    assert "lasticsearch" in posts["C0SRE"] and "vault" not in posts["C0SRE"]
    assert "team-security → U0SECURITY" in out.decode()


async def test_digest_to_a_channel_posts_the_whole_tenant_once(
    settings: Settings, store: Store, embedder: FastEmbedder, unique_tenant: str
) -> None:
    await add_workspace(store, "T_GAPS_" + unique_tenant, unique_tenant)
    await _plant_unanswered(store, embedder, unique_tenant)
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
    assert "Runbook digest" in text and "*6* unanswered" in text
    assert "— 3 questions" in text and "runbook gaps --draft g-" in text
    assert "posted to C_DIGEST" in out.decode()


async def test_gaps_json_names_thresholds_and_every_gap_an_id(
    settings: Settings, store: Store, embedder: FastEmbedder, unique_tenant: str
) -> None:
    await add_workspace(store, "T_GAPS_" + unique_tenant, unique_tenant)
    await _plant_unanswered(store, embedder, unique_tenant)
    done = runbook_cli(settings, "gaps", "--tenant", unique_tenant, "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["thresholds"] == {
        "cluster_similarity": THRESHOLDS.cluster_similarity,
        "nearest_similarity": THRESHOLDS.nearest_similarity,
    }
    assert sorted(g["count"] for g in report["gaps"]) == [1, 2, 3]
    assert all(g["id"].startswith("g-") and g["owner"] for g in report["gaps"])
