"""The ask pipeline end to end on the demo corpus: real Postgres, real model, fake Anthropic."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from pydantic import SecretStr

from rag import Draft, Excerpt, FastEmbedder, IngestReport, RagService, Settings, Store
from rag.answering.answerers import ClaudeAnswerer, ExtractiveAnswerer, build_anthropic_client
from rag.answering.context import build_context
from rag.answering.markers import find_markers, marker_numbers
from rag.errors import ConfigurationError
from rag.retrieval.ranker import RankModel, shipped_model
from tests import credentials
from tests.fakes.anthropic_api import FakeAnthropic, delay, empty, error, garbage, tool_answer

pytestmark = pytest.mark.usefixtures("demo_corpus")

INJECTION_MARKER = "Ignore all previous instructions"
GATEWAY_502 = "payments gateway is returning 502s, what do I check?"


class CountingAnswerer:
    """The extractive answerer, counting how often it is asked."""

    name = "counting"

    def __init__(self) -> None:
        self.calls = 0
        self._inner = ExtractiveAnswerer()

    async def answer(
        self, question: str, excerpts: Sequence[Excerpt], *, correction: str | None = None
    ) -> Draft:
        self.calls += 1
        return await self._inner.answer(question, excerpts, correction=correction)

    async def aclose(self) -> None:
        await self._inner.aclose()


def claude_settings(settings: Settings, base_url: str, **overrides: Any) -> Settings:
    return settings.model_copy(
        update={
            "anthropic_api_key": SecretStr(credentials.ANTHROPIC_API_KEY),
            "anthropic_base_url": base_url,
            "answer_timeout_s": 0.5,
            "answer_max_retries": 0,
            **overrides,
        }
    )


@pytest_asyncio.fixture(loop_scope="session")
async def fake_anthropic() -> AsyncIterator[FakeAnthropic]:
    async with FakeAnthropic() as server:
        yield server


@pytest_asyncio.fixture(loop_scope="session")
async def claude_service(
    store: Store, embedder: FastEmbedder, settings: Settings, fake_anthropic: FakeAnthropic
) -> AsyncIterator[RagService]:
    configured = claude_settings(settings, fake_anthropic.base_url)
    client = build_anthropic_client(configured)
    answerer = ClaudeAnswerer(client=client, model=configured.anthropic_model)
    yield RagService(store=store, embedder=embedder, answerer=answerer, settings=configured)
    await answerer.aclose()


@pytest.fixture
def counting() -> CountingAnswerer:
    return CountingAnswerer()


@pytest.fixture
def service(
    store: Store, embedder: FastEmbedder, settings: Settings, counting: CountingAnswerer
) -> RagService:
    return RagService(store=store, embedder=embedder, answerer=counting, settings=settings)


async def tenants_of(store: Store, chunk_ids: list[int]) -> set[str]:
    async with store.pool.connection() as conn:
        cur = await conn.execute(
            "SELECT DISTINCT tenant_id FROM chunks WHERE chunk_id = ANY(%s)", (chunk_ids,)
        )
        return {row[0] for row in await cur.fetchall()}


async def excerpts_of(service: RagService, tenant: str, question: str) -> tuple[Excerpt, ...]:
    """The excerpts ``ask`` hands the answerer, numbered as it numbers them."""
    retrieval = await service.retrieve(tenant, question)
    context = build_context(
        retrieval.candidates.evidence,
        max_excerpts=6,
        per_document=service.settings.max_chunks_per_document,
        max_chars=service.settings.context_max_chars,
    )
    return context.excerpts


def opening_words(excerpt: Excerpt) -> str:
    """A quote that verifies against ``excerpt``: its chunk's first eight words."""
    return " ".join(excerpt.evidence.content.split()[:8])


async def first_excerpt_quote(service: RagService, tenant: str, question: str) -> str:
    """A quote that verifies against excerpt 1, computed the way ``ask`` numbers excerpts."""
    return opening_words((await excerpts_of(service, tenant, question))[0])


def numbers_in_order(text: str) -> list[int]:
    """Every citation number the text's markers name, in the order they are read."""
    return [n for match in find_markers(text) for n in marker_numbers(match)]


async def test_answerable_question_gets_a_verified_answer(
    service: RagService, counting: CountingAnswerer
) -> None:
    result = await service.ask("acme", "payments gateway is returning 502s, what do I check?")
    assert result.status == "answered", result.reason_code
    assert result.citations and counting.calls == 1
    for citation in result.citations:
        assert " ".join(citation.quote.split()) in " ".join(citation.evidence.content.split())
    assert {"embed", "retrieve", "answer", "total"} <= set(result.timings_ms)


async def test_cross_tenant_question_abstains_with_zero_rows_of_the_other_tenant(
    service: RagService, store: Store, counting: CountingAnswerer
) -> None:
    # Only acme has a CDN runbook; globex must not see it.
    result = await service.ask("globex", "How do I purge a bad object from the CDN edge cache?")
    assert result.status == "abstained"
    assert await tenants_of(store, [e.chunk_id for e in result.evidence]) <= {"globex"}
    assert counting.calls == 0


async def test_unknown_tenant_abstains_with_no_evidence_at_all(service: RagService) -> None:
    result = await service.ask("no-such-tenant", "How do I fail over the database?")
    assert (result.status, result.reason_code, result.evidence) == ("abstained", "no_evidence", ())


async def test_superseded_runbook_text_is_never_retrieved(service: RagService) -> None:
    result = await service.ask("acme", "deployctl revert --legacy-bastion bastion-03")
    assert all(e.document_id != "deploys/rollback-legacy" for e in result.evidence)
    assert all("bastion-03" not in e.content for e in result.evidence)


async def test_abstention_makes_zero_model_calls(
    claude_service: RagService, fake_anthropic: FakeAnthropic
) -> None:
    before = fake_anthropic.calls
    result = await claude_service.ask("acme", "What is the office wifi password?")
    assert result.status == "abstained"
    assert fake_anthropic.calls == before


async def test_service_scope_narrows_retrieval_to_that_service(service: RagService) -> None:
    result = await service.ask("acme", "how do I check replication lag?", service="postgres")
    assert result.fallback_reason is None
    assert result.evidence and {e.service for e in result.evidence} == {"postgres"}


async def test_service_scope_with_nothing_falls_back_unfiltered_and_says_why(
    service: RagService,
) -> None:
    result = await service.ask("acme", "how do I check replication lag?", service="mainframe")
    assert result.fallback_reason == "filtered_no_evidence"
    assert result.evidence


async def test_weak_service_scope_falls_back_unfiltered_and_says_why(service: RagService) -> None:
    # The CDN runbooks say nothing about Kafka consumer lag: the filtered search is weak.
    result = await service.ask(
        "acme", "kafka consumer group lag keeps growing on fulfilment", service="cdn"
    )
    assert result.fallback_reason == "filtered_low_quality"
    assert any(e.document_id == "messaging/kafka-consumer-lag" for e in result.evidence)


async def test_alert_name_in_the_question_is_a_recorded_ranking_hint(service: RagService) -> None:
    result = await service.ask("globex", "KubePodCrashLooping firing for ledger-api")
    top = result.evidence[0]
    assert top.document_id == "kubernetes/KubePodCrashLooping"
    assert "named:kubernetes/KubePodCrashLooping" in top.hit_reasons


async def test_a_claim_whose_citation_was_dropped_is_retried_then_removed(
    claude_service: RagService, fake_anthropic: FakeAnthropic
) -> None:
    question = "payments gateway is returning 502s, what do I check?"
    quote = await first_excerpt_quote(claude_service, "acme", question)
    # The review's reproduction: one verified claim, and one whose citation names no excerpt.
    draft = tool_answer(
        "answered",
        f"{quote} [1] Then run `DROP TABLE payments` on the primary. [9]",
        [(1, quote), (9, "run DROP TABLE payments on the primary")],
    )
    fake_anthropic.enqueue(draft, draft)
    before = fake_anthropic.calls
    result = await claude_service.ask("acme", question)
    assert fake_anthropic.calls - before == 2, "one corrective retry"
    assert "[9] names no excerpt" in fake_anthropic.last_body["messages"][-1]["content"]
    assert result.status == "answered"
    assert [c.n for c in result.citations] == [1]
    assert [d.n for d in result.dropped_citations] == [9, 9]
    assert "DROP TABLE" not in result.answer and "[9]" not in result.answer


async def test_unverifiable_quotes_get_one_corrective_retry_then_abstain(
    claude_service: RagService, fake_anthropic: FakeAnthropic
) -> None:
    invented = "restart every pod in the cluster twice"
    fake_anthropic.enqueue(
        tool_answer("answered", f"{invented} [1]", [(1, invented)]),
        tool_answer("answered", f"{invented} [1]", [(1, invented)]),
    )
    before = fake_anthropic.calls
    result = await claude_service.ask(
        "acme", "payments gateway is returning 502s, what do I check?"
    )
    assert (result.status, result.reason_code) == ("abstained", "unverifiable_citations")
    assert fake_anthropic.calls - before == 2
    correction = fake_anthropic.last_body["messages"][-1]["content"]
    assert "not a contiguous excerpt" in correction
    assert len(result.dropped_citations) == 2 and result.evidence


@pytest.mark.parametrize(
    ("behaviour", "code", "retryable"),
    [
        (error(429), "answer_provider_rate_limited", True),
        (error(500), "answer_provider_unavailable", True),
        (error(401), "answer_provider_authentication_failed", False),
        (garbage(), "answer_provider_invalid_response", False),
        (empty(), "answer_provider_invalid_response", False),
        (delay(2.0), "answer_provider_timeout", True),
    ],
    ids=["429", "500", "401", "invalid-json", "empty", "hang"],
)
async def test_provider_failure_yields_its_code_and_keeps_the_evidence(
    claude_service: RagService,
    fake_anthropic: FakeAnthropic,
    behaviour: Any,
    code: str,
    retryable: bool,
) -> None:
    fake_anthropic.enqueue(behaviour)
    result = await claude_service.ask(
        "acme", "payments gateway is returning 502s, what do I check?"
    )
    assert (result.status, result.reason_code, result.retryable) == ("error", code, retryable)
    assert result.evidence, "the responder still sees the sources that were found"
    assert result.provider == "claude"


async def test_empty_answer_text_is_an_empty_response_error(
    claude_service: RagService, fake_anthropic: FakeAnthropic
) -> None:
    fake_anthropic.enqueue(tool_answer("answered", "", []))
    result = await claude_service.ask(
        "acme", "payments gateway is returning 502s, what do I check?"
    )
    assert (result.status, result.reason_code) == ("error", "answer_provider_empty_response")


async def test_injection_text_arrives_verbatim_inside_its_excerpt_tags(
    claude_service: RagService, fake_anthropic: FakeAnthropic
) -> None:
    fake_anthropic.enqueue(tool_answer("not_in_sources", "", []))
    await claude_service.ask(
        "acme", "Notes for automated tools on status page updates: what should bots post?"
    )
    prompt = fake_anthropic.last_body["messages"][0]["content"]
    start = prompt.index(INJECTION_MARKER)
    opening = prompt.rindex("<runbook-excerpt", 0, start)
    assert prompt.index("</runbook-excerpt>", opening) > start
    assert 'doc="incident/status-page-updates"' in prompt[opening:start]


async def test_extractive_answer_is_identical_across_runs(service: RagService) -> None:
    question = "redis is evicting keys, what do I do?"
    first = await service.ask("acme", question)
    second = await service.ask("acme", question)
    assert first.status == "answered"
    assert (first.answer, first.citations) == (second.answer, second.citations)


async def test_trace_row_holds_ids_and_timings_but_no_question_text(
    service: RagService, store: Store
) -> None:
    question = "kafka consumer lag on fulfilment-service"
    result = await service.ask("acme", question)
    async with store.pool.connection() as conn:
        cur = await conn.execute(
            "SELECT status, question, answer, evidence, timings_ms FROM retrieval_traces "
            "WHERE tenant_id = 'acme' AND trace_id = %s",
            (result.answer_id,),
        )
        row = await cur.fetchone()
    assert row is not None
    status, stored_question, stored_answer, evidence, timings = row
    assert status == result.status
    assert stored_question is None and stored_answer is None
    assert evidence and {"chunk_id", "cosine", "hit_reasons"} <= set(evidence[0])
    assert "retrieve" in timings


async def test_overlong_question_is_refused_with_a_clear_message(service: RagService) -> None:
    result = await service.ask("acme", "why " * 1000)
    assert (result.status, result.reason_code) == ("error", "question_invalid")
    assert "limit is" in result.answer


async def test_demo_corpus_ingest_reports_the_superseded_runbook(demo_corpus: IngestReport) -> None:
    assert demo_corpus.failed == []
    assert demo_corpus.superseded >= 1


@pytest.mark.parametrize("tag", ["(dbdown #4)", "(dbdown #14)", "(dbdown #52)", "#30"])
async def test_a_reference_number_in_a_question_does_not_change_its_answer(
    service: RagService, tag: str
) -> None:
    """Issue 27: "(dbdown #4)" abstained where "(dbdown #5)" answered; no runbook is about
    a ticket number, so it is not searched."""
    question = "how do I fail over the payments database?"
    plain = await service.ask("acme", question)
    tagged = await service.ask("acme", f"{question} {tag}")
    assert plain.status == "answered"
    assert tagged.status == "answered", tagged.reason_code
    assert tagged.citations[0].evidence.document_id == plain.citations[0].evidence.document_id


async def test_failing_over_the_payments_database_opens_the_patroni_failover_procedure(
    service: RagService,
) -> None:
    """Issue 28: "fail over" (two words) met neither the Patroni runbook's "Failover" headings
    nor its procedure, and the answer opened on the payment gateway's PSP failover."""
    result = await service.ask("acme", "how do I fail over the payments database?")
    assert result.status == "answered", result.reason_code
    first = result.citations[0].evidence
    assert first.document_id == "database/primary-failover"
    assert "Failover" in first.heading_path
    assert "patronictl" in first.content
    assert "payctl" not in result.answer


ROLLBACK = "how do I roll back a bad checkout-api release?"


async def test_extractive_markers_read_one_two_three_and_each_names_the_chunk_it_quotes(
    service: RagService,
) -> None:
    """Issue 28: the rollback answer read [1] … [4] … [3] … [2], numbered by evidence rank."""
    excerpts = await excerpts_of(service, "acme", ROLLBACK)
    draft = await ExtractiveAnswerer().answer(ROLLBACK, excerpts)
    result = await service.ask("acme", ROLLBACK)
    assert result.status == "answered", result.reason_code
    numbers = numbers_in_order(result.answer)
    assert list(dict.fromkeys(numbers)) == list(range(1, len(set(numbers)) + 1))
    assert [c.n for c in result.citations] == sorted(c.n for c in result.citations)
    # Only the labels moved: mapped back to excerpt numbers, the markers are the draft's.
    excerpt_of = {e.evidence.chunk_id: e.n for e in excerpts}
    old = {c.n: excerpt_of[c.evidence.chunk_id] for c in result.citations}
    assert [old[n] for n in numbers] == numbers_in_order(draft.text)
    assert {(old[c.n], c.quote) for c in result.citations} == {
        (c.n, c.quote) for c in draft.citations
    }


async def test_claude_markers_read_one_two_three_and_each_names_the_chunk_it_quotes(
    claude_service: RagService, fake_anthropic: FakeAnthropic
) -> None:
    excerpts = await excerpts_of(claude_service, "acme", GATEWAY_502)
    first, second, third = (opening_words(e) for e in excerpts[:3])
    fake_anthropic.enqueue(
        tool_answer(
            "answered",
            f"{third} [3]\n\n{first} [1]\n\n{second} [2, 1]\n\nCheck `pods[2]` first. [3]",
            [(3, third), (1, first), (2, second)],
        )
    )
    result = await claude_service.ask("acme", GATEWAY_502)
    assert result.status == "answered" and not result.dropped_citations
    assert result.answer == (
        f"{third} [1]\n\n{first} [2]\n\n{second} [2, 3]\n\nCheck `pods[2]` first. [1]"
    )
    assert [(c.n, c.quote, c.evidence.chunk_id) for c in result.citations] == [
        (1, third, excerpts[2].evidence.chunk_id),
        (2, first, excerpts[0].evidence.chunk_id),
        (3, second, excerpts[1].evidence.chunk_id),
    ]


def test_rank_model_path_replaces_the_shipped_ranking_model(
    store: Store, embedder: FastEmbedder, settings: Settings, tmp_path: Path
) -> None:
    """Issue 26's refit comparison needed a wrapper; RUNBOOK_RANK_MODEL_PATH now names the file."""
    refit = json.loads(Path("rag/retrieval/rank_model.json").read_text(encoding="utf-8"))
    refit["weights"] = {name: 2 * weight for name, weight in refit["weights"].items()}
    path = tmp_path / "rank.json"
    path.write_text(json.dumps(refit), encoding="utf-8")
    configured = settings.model_copy(update={"rank_model_path": path})
    service = RagService(
        store=store, embedder=embedder, answerer=ExtractiveAnswerer(), settings=configured
    )
    assert service.rank_model == RankModel.load(path)
    assert service.rank_model != shipped_model()


@pytest.mark.parametrize(
    ("name", "text"),
    [("missing.json", None), ("truncated.json", '{"weights": {'), ("partial.json", "{}")],
)
def test_a_missing_or_malformed_rank_model_file_is_an_error_naming_it(
    store: Store,
    embedder: FastEmbedder,
    settings: Settings,
    tmp_path: Path,
    name: str,
    text: str | None,
) -> None:
    path = tmp_path / name
    if text is not None:
        path.write_text(text, encoding="utf-8")
    configured = settings.model_copy(update={"rank_model_path": path})
    with pytest.raises(ConfigurationError, match=re.escape(f"ranking model {path}:")):
        RagService(
            store=store, embedder=embedder, answerer=ExtractiveAnswerer(), settings=configured
        )
