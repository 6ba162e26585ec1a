"""Stored answers keep chunk ids and quote positions, not runbook text; a redraw re-reads the
chunks under the tenant reader and says when a runbook changed or was pruned since."""

from __future__ import annotations

import json
import uuid
from dataclasses import asdict
from importlib.resources import files
from pathlib import Path

from psycopg.types.json import Jsonb

from bot.core.answers.store import AnswerStore, Placement, StoredAnswer
from bot.slack.answering import render_stored
from rag import (
    FastEmbedder,
    IngestLimits,
    QuoteSpan,
    RagService,
    Settings,
    Store,
    ingest_limits,
    ingest_path,
    load_chunks,
    locate_quote,
    quote_at,
)
from tests.test_ingest import CERTS, FAILOVER, write

QUESTION = "the primary is unreachable and writes fail, how do I promote a replica?"
PLACEMENT = Placement(
    entry="mention",
    team_id="T_ACME",
    enterprise_id="",
    channel_id="C_OPS",
    thread_ts="1.0",
    ephemeral=False,
)


async def ingest(store: Store, embedder: FastEmbedder, limits: IngestLimits, root: Path,
                 tenant: str, *, prune: bool = False) -> None:  # fmt: skip
    await ingest_path(store, embedder, root, tenant=tenant, prune=prune, limits=limits)


async def answered(
    service: RagService, store: Store, tenant: str
) -> tuple[AnswerStore, str, list[str]]:
    result = await service.ask(tenant, QUESTION, service=None)
    assert result.status == "answered" and result.citations
    answers = AnswerStore(store)
    answer_id = await answers.save(result, question=QUESTION, service=None, placement=PLACEMENT)
    return answers, answer_id, [c.quote for c in result.citations]


async def reload(answers: AnswerStore, tenant: str, answer_id: str) -> StoredAnswer:
    stored = await answers.load(tenant, answer_id)
    assert stored is not None
    return stored


async def test_a_stored_answer_holds_ids_and_positions_and_no_runbook_text(
    store: Store, embedder: FastEmbedder, service: RagService, settings: Settings,
    unique_tenant: str, tmp_path: Path,
) -> None:  # fmt: skip
    write(tmp_path, "db/failover.md", FAILOVER)
    write(tmp_path, "tls/certs.md", CERTS)
    await ingest(store, embedder, ingest_limits(settings), tmp_path, unique_tenant)
    answers, answer_id, originals = await answered(service, store, unique_tenant)

    async with store.pool.connection() as conn:
        cur = await conn.execute(
            "SELECT result::text, to_jsonb(answers) ? 'response_url' FROM answers "
            "WHERE tenant_id = %s AND answer_id = %s",
            (unique_tenant, uuid.UUID(answer_id)),
        )
        row = await cur.fetchone()
    assert row is not None
    stored_json, has_response_url = row
    assert not has_response_url
    # Only the answer's own text (its retention is a separate setting) holds runbook words.
    stored_result = json.loads(stored_json)
    beside_answer = json.dumps({k: v for k, v in stored_result.items() if k != "answer"})
    assert "patronictl" not in beside_answer and "content" not in beside_answer
    assert all(isinstance(c["quote"], list) for c in stored_result["citations"])

    stored = await reload(answers, unique_tenant, answer_id)
    assert [c.quote for c in stored.result.citations] == originals
    assert stored.changes == ()
    assert "patronictl" in " ".join(e.content for e in stored.result.evidence)  # re-read


async def test_redraw_after_the_runbook_changed_or_was_pruned_says_so_on_the_card(
    store: Store, embedder: FastEmbedder, service: RagService, settings: Settings,
    unique_tenant: str, tmp_path: Path,
) -> None:  # fmt: skip
    limits = ingest_limits(settings)
    write(tmp_path, "db/failover.md", FAILOVER)
    write(tmp_path, "tls/certs.md", CERTS)
    write(tmp_path, "tls/renewal.md", CERTS.replace("TLS certificate expiry", "Renewals"))
    await ingest(store, embedder, limits, tmp_path, unique_tenant)
    answers, answer_id, originals = await answered(service, store, unique_tenant)

    write(tmp_path, "db/failover.md", FAILOVER + "\nPage the database on-call after promoting.\n")
    await ingest(store, embedder, limits, tmp_path, unique_tenant)
    updated = await reload(answers, unique_tenant, answer_id)
    assert {c.change for c in updated.changes} == {"updated"}
    # Still the text the answer was based on (the superseded version is kept, marked).
    assert [c.quote for c in updated.result.citations] == originals
    card = render_stored(updated, ephemeral=False, stale_after_days=365)
    assert "runbook was updated since this answer" in str(card.blocks)

    (tmp_path / "db" / "failover.md").unlink()
    await ingest(store, embedder, limits, tmp_path, unique_tenant, prune=True)
    pruned = await reload(answers, unique_tenant, answer_id)
    assert {c.change for c in pruned.changes} == {"removed"}
    assert "runbook was removed since this answer" in str(
        render_stored(pruned, ephemeral=False, stale_after_days=365).blocks
    )


async def test_chunks_are_reread_only_under_their_own_tenant(
    store: Store, embedder: FastEmbedder, service: RagService, settings: Settings,
    unique_tenant: str, tmp_path: Path,
) -> None:  # fmt: skip
    write(tmp_path, "db/failover.md", FAILOVER)
    await ingest(store, embedder, ingest_limits(settings), tmp_path, unique_tenant)
    result = await service.ask(unique_tenant, QUESTION, service=None)
    ids = [e.chunk_id for e in result.evidence]
    assert ids and set(await load_chunks(store, unique_tenant, ids)) == set(ids)
    assert await load_chunks(store, f"other-{unique_tenant}", ids) == {}


def test_a_quote_is_a_span_of_its_runbook_and_reads_back_as_first_shown() -> None:
    content = "Promote  the\n  healthiest \u201creplica\u201d with\npatronictl failover."
    reflowed = locate_quote(content, 'the healthiest "replica" with patronictl')
    assert reflowed is not None and reflowed.reflowed
    assert quote_at(content, reflowed) == 'the healthiest "replica" with patronictl'
    raw = QuoteSpan(reflowed.start, reflowed.end)
    assert quote_at(content, raw) == "the\n  healthiest \u201creplica\u201d with\npatronictl"
    verbatim = locate_quote(content, "patronictl failover.")
    assert verbatim is not None and not verbatim.reflowed
    assert quote_at(content, verbatim) == "patronictl failover."
    assert locate_quote(content, "not in this runbook at all") is None


async def test_migration_006_turns_a_stored_copy_into_references(
    store: Store, embedder: FastEmbedder, service: RagService, settings: Settings,
    unique_tenant: str, tmp_path: Path,
) -> None:  # fmt: skip
    write(tmp_path, "db/failover.md", FAILOVER)
    await ingest(store, embedder, ingest_limits(settings), tmp_path, unique_tenant)
    result = await service.ask(unique_tenant, QUESTION, service=None)
    cited = result.citations[0]
    evidence = {**asdict(cited.evidence), "heading_path": list(cited.evidence.heading_path)}
    legacy = {  # what 002's answers.result held: whole chunks, quotes as text
        "status": "answered", "reason_code": None, "answer": result.answer,
        "citations": [{"n": cited.n, "quote": cited.quote, "evidence": evidence},
                      {"n": 9, "quote": "a quote reflowed by a model", "evidence": evidence}],
        "evidence": [evidence], "provider": "extractive", "retryable": False,
        "tenant": unique_tenant, "service": None, "fallback_reason": None, "answer_id": None,
    }  # fmt: skip
    answer_id = uuid.uuid4()
    migration = files("rag.store").joinpath("sql/006_answers_by_reference.sql").read_text()
    convert = migration[: migration.index("ALTER TABLE answers DROP COLUMN")]
    async with store.pool.connection() as conn:
        await conn.execute(
            "INSERT INTO answers (tenant_id, answer_id, entry, question, result, team_id) "
            "VALUES (%s, %s, 'mention', %s, %s, 'T_ACME')",
            (unique_tenant, answer_id, QUESTION, Jsonb(legacy)),
        )
        await conn.execute(convert.encode())

    stored = await reload(AnswerStore(store), unique_tenant, str(answer_id))
    assert [c.quote for c in stored.result.citations] == [cited.quote]
    assert [(c.n, c.change) for c in stored.changes] == [(9, "gone")]
    assert [e.chunk_id for e in stored.result.evidence] == [cited.evidence.chunk_id]
