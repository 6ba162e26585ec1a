"""Issue 38 end to end (embedded Postgres, the real embedding model): "who do I page" opens on
the runbook's escalation section, or opens on the runbook's owner when it has none (kept when
the answer is stored and redrawn), and noise around a question changes neither the decision
nor the first section."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.core.answers.outcome_text import OWNER_LABEL
from bot.core.answers.store import AnswerStore
from bot.slack.answering import render_stored
from rag import FastEmbedder, RagService, Settings, Store, ingest_limits, ingest_path
from rag.retrieval.escalation import owner_line
from tests.test_answers_by_reference import PLACEMENT

SEARCH = """---
title: Search indexer stuck
owner: team-search
---
# Search indexer stuck

## Symptoms

New products do not show up in search results and the indexer queue keeps growing.

## Mitigation

Restart the indexer workers with `systemctl restart search-indexer`, then watch the queue
drain on the indexer dashboard. If the queue does not shrink within ten minutes, rebuild the
index from the nightly snapshot.
"""
LEDGER = """---
title: Ledger export late
owner: team-ledger
---
# Ledger export late

## Symptoms

The nightly ledger export to the finance bucket has not finished by six in the morning.

## Mitigation

Re-run the export job with `ledgerctl export --date yesterday` and check the bucket.

## Escalation

Page the ledger on-call through the `ledger-primary` schedule; finance must hear from us
before nine.
"""


@pytest.fixture
async def oncall_tenant(
    tmp_path: Path, store: Store, embedder: FastEmbedder, settings: Settings, unique_tenant: str
) -> str:
    (tmp_path / "search-indexer.md").write_text(SEARCH, encoding="utf-8")
    (tmp_path / "ledger-export.md").write_text(LEDGER, encoding="utf-8")
    await ingest_path(
        store, embedder, tmp_path, tenant=unique_tenant, prune=False, limits=ingest_limits(settings)
    )
    return unique_tenant


@pytest.mark.slow
async def test_asking_whom_to_page_opens_on_the_escalation_section(
    service: RagService, oncall_tenant: str
) -> None:
    result = await service.ask(oncall_tenant, "the ledger export is late, who do I page?")
    assert result.status == "answered"
    assert result.citations[0].evidence.heading_path[-1] == "Escalation"
    assert result.owner_contact is None


@pytest.mark.slow
async def test_without_an_escalation_section_the_answer_names_the_owner_as_who_to_contact(
    service: RagService, oncall_tenant: str
) -> None:
    result = await service.ask(
        oncall_tenant, "search indexer stuck, new products missing from search, who do I page?"
    )
    assert result.status == "answered"
    assert result.citations[0].evidence.document_id == "search-indexer"
    assert result.owner_contact == "team-search"
    assert result.answer.startswith(owner_line("team-search") + "\n\n")


@pytest.mark.slow
async def test_the_owner_to_contact_is_shown_again_when_the_stored_answer_is_redrawn(
    service: RagService, store: Store, oncall_tenant: str
) -> None:
    question = "search indexer stuck, new products missing from search, who do I page?"
    result = await service.ask(oncall_tenant, question)
    answers = AnswerStore(store)
    answer_id = await answers.save(result, question=question, service=None, placement=PLACEMENT)

    stored = await answers.load(oncall_tenant, answer_id)
    assert stored is not None and stored.result.owner_contact == "team-search"
    card = render_stored(stored, ephemeral=False, stale_after_days=365)
    assert f"*{OWNER_LABEL}* (from the runbook's metadata, not its text): team-search" in str(
        card.blocks
    )


@pytest.mark.slow
async def test_hosts_addresses_and_urgency_change_neither_the_decision_nor_the_first_section(
    service: RagService, oncall_tenant: str
) -> None:
    for question, noisy in (
        (
            "the search indexer is stuck, how do I fix it?",
            "URGENT: the search indexer on ip-10-4-1-77.ec2.internal is stuck, how do I fix it "
            "NOW!!!",
        ),
        (
            "ledger export late, what do I do",
            "ledger export late on worker-3 10.0.0.5, what do I do asap pls",
        ),
        ("how do I rotate the vault root token?", "how do I rotate the vault root token? HELP"),
    ):
        plain = await service.retrieve(oncall_tenant, question)
        shouted = await service.retrieve(oncall_tenant, noisy)
        assert shouted.gate.reason == plain.gate.reason, noisy
        assert shouted.candidates.evidence[0].chunk_id == plain.candidates.evidence[0].chunk_id
