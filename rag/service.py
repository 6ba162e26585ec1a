"""``RagService.ask``: the one pipeline behind the CLI and every Slack entry point.

question → embed → retrieve (tenant-filtered hybrid) → gate → answer → verify → trace.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Awaitable
from dataclasses import dataclass, field, replace
from typing import TypeVar

import psycopg

from rag.answering.answers import Answerer, AskResult, AskStatus, Citation, DroppedCitation
from rag.answering.context import build_context
from rag.answering.runbook_sections import RunbookCache
from rag.answering.verified_draft import draft_verified
from rag.embedding.embedder import Embedder, Vectors
from rag.errors import (
    AnswerProviderError,
    ModelMismatchError,
    QuestionError,
    RunbookError,
    StoreError,
)
from rag.gate.decision import Gate, GateModel, GateQuery, decide
from rag.metrics import RagMetrics
from rag.retrieval.alerts import Alert, parse_alert
from rag.retrieval.catalog import CatalogCache
from rag.retrieval.escalation import contact_line, owner_to_contact
from rag.retrieval.evidence import Evidence
from rag.retrieval.name_vocabulary import uses_name
from rag.retrieval.query_noise import without_noise
from rag.retrieval.query_vectors import QueryVectors
from rag.retrieval.rank import ScopeHints
from rag.retrieval.ranker import RankModel
from rag.retrieval.retrieve import Candidates, search
from rag.retrieval.terms import without_references
from rag.settings import Settings
from rag.store.connection import Store
from rag.trace import TraceRecord, write_trace

logger = logging.getLogger(__name__)

T = TypeVar("T")

# Each retriever contributes this many candidates before fusion.
CANDIDATES_PER_RETRIEVER = 40
_MAX_EXCERPTS = 6


@dataclass
class Retrieval:
    candidates: Candidates
    gate: Gate
    hints: ScopeHints
    fallback_reason: str | None
    # What the gate read besides the candidates (``rag.evaluation.gate_fit`` refits on the same).
    asked: GateQuery
    timings_ms: dict[str, float] = field(default_factory=dict)
    embedding: Vectors | None = None

    @property
    def alert(self) -> Alert | None:
        return self.asked.alert


class RagService:
    def __init__(
        self,
        *,
        store: Store,
        embedder: Embedder,
        answerer: Answerer,
        settings: Settings,
        metrics: RagMetrics | None = None,
    ) -> None:
        self.store = store
        self.runbooks = RunbookCache()
        self.embedder = embedder
        self.query_vectors = QueryVectors(embedder)
        self.answerer = answerer
        self.settings = settings
        self.metrics = metrics or RagMetrics()
        self.catalogs = CatalogCache(store)
        self.gate_model = GateModel.load(settings.gate_model_path)
        self.answer_threshold = (
            settings.answer_threshold
            if settings.answer_threshold is not None
            else self.gate_model.threshold
        )
        if self.gate_model.embedding_model != embedder.model_id:
            logger.warning(
                "the gate model was fitted for %s, not %s; refit it (python -m rag.gate_fit)",
                self.gate_model.embedding_model,
                embedder.model_id,
            )
        self.rank_model = RankModel.load(settings.rank_model_path)
        if self.rank_model.embedding_model != embedder.model_id:
            logger.warning(
                "the ranking model was fitted for %s, not %s; refit it "
                "(python -m rag.gate_fit --ranking)",
                self.rank_model.embedding_model,
                embedder.model_id,
            )

    async def ask(
        self,
        tenant: str,
        question: str,
        *,
        service: str | None = None,
        trace_unanswered: bool = True,
    ) -> AskResult:
        """The pipeline's outcome, traced; ``trace_unanswered=False`` leaves no trace of a
        question that was not answered (the bot says nothing to a silent follow-up, and keeps
        nothing of it either)."""
        started = time.perf_counter()
        trace_id = str(uuid.uuid4())
        retrieval: Retrieval | None = None
        try:
            question = self.check_question(question)
            retrieval = await self.retrieve(tenant, question, service=service)
            if retrieval.gate.reason is not None:
                result = self._result(
                    tenant, service, retrieval, "abstained", retrieval.gate.reason
                )
            else:
                result = await self._answer(tenant, service, question, retrieval)
                runbook = await _db(self.runbooks.runbook_of(self.store, result))
                result = replace(result, runbook=runbook)
        except RunbookError as exc:
            result = self._error(tenant, service, retrieval, exc)
        result.timings_ms["total"] = _ms_since(started)
        result = replace(result, answer_id=trace_id)
        self.metrics.ask_seconds.labels(result.status).observe(result.timings_ms["total"] / 1000)
        if result.status == "abstained" and result.reason_code:
            self.metrics.abstentions.labels(result.reason_code).inc()
        if trace_unanswered or result.status == "answered":
            await self._trace(trace_id, question, result, retrieval)
        return result

    def check_question(self, question: str) -> str:
        # Line breaks stay: a pasted alert's lines (``summary: ...``, ``- alertname = ...``) are
        # how its parser tells the name and summary from the labels.
        lines = (" ".join(line.split()) for line in question.splitlines())
        cleaned = "\n".join(line for line in lines if line)
        if not cleaned:
            raise QuestionError("the question is empty")
        if len(cleaned) > self.settings.max_question_chars:
            raise QuestionError(
                f"the question is {len(cleaned)} characters; the limit is "
                f"{self.settings.max_question_chars}. Ask about one symptom or alert at a time."
            )
        return cleaned

    async def retrieve(
        self, tenant: str, question: str, *, service: str | None = None
    ) -> Retrieval:
        """Embed, search and gate; no answerer is involved (``runbook eval`` uses this alone)."""
        timings: dict[str, float] = {}
        catalog = await _db(self.catalogs.catalog_for(tenant))
        if not catalog.empty and self.embedder.model_id not in catalog.embedding_models:
            raise ModelMismatchError(
                tenant=tenant,
                configured=self.embedder.model_id,
                stored=sorted(catalog.embedding_models),
            )
        # An alert post is searched by its name and summary, not its labels and formatting.
        alert = parse_alert(question)
        if alert is not None:
            # A runbook named in another spelling (``kube-pod-crash-looping`` fires,
            # ``KubePodCrashLooping.md`` answers) or linked by ``runbook_url`` is named exactly.
            alert = replace(alert, runbook=catalog.runbook_named(alert.name, alert.runbook_url))
        # Hosts, addresses, pod hashes and urgency words say where it fired and how stressed
        # the asker is, never which runbook applies (``rag.retrieval.query_noise``); the
        # question as asked is what the answer shows and the trace keeps.
        query = (
            alert.search_text()
            if alert
            else catalog.with_runbook_names(without_noise(without_references(question)))
        )
        hints = catalog.hints_in(
            query,
            alert.name_in_tenant if alert else None,
            alert.runbook if alert else None,
        )
        if service:
            hints = replace(hints, services=hints.services | {service})
        started = time.perf_counter()
        embedding = await self.query_vectors.vector(query)
        timings["embed"] = _ms_since(started)
        self.metrics.embed_seconds.observe(timings["embed"] / 1000)

        started = time.perf_counter()
        fallback_reason = None
        # Only a partition of its own above exact_search_max_chunks has an HNSW graph (rebalance
        # and ingest build it there); every other tenant is scanned exactly.
        exact = (
            not catalog.own_partition
            or catalog.chunk_count <= self.settings.exact_search_max_chunks
        )
        candidates = await self._search(tenant, query, embedding, service, hints, exact)
        if service is not None:
            if not candidates.evidence:
                fallback_reason = "filtered_no_evidence"
            elif candidates.best_cosine < self.settings.min_cosine:
                fallback_reason = "filtered_low_quality"
            if fallback_reason is not None:
                candidates = await self._search(tenant, query, embedding, None, hints, exact)
        timings["retrieve"] = _ms_since(started)
        self.metrics.retrieval_seconds.observe(timings["retrieve"] / 1000)
        self.metrics.retrieval_hits.observe(len(candidates.evidence))
        asked = GateQuery(
            query,
            catalog.names(),
            alert,
            ordinary_unknown=self._ordinary_unknown(candidates),
            named_runbook=hints.alert_document,
        )
        if alert is not None and alert.name and alert.runbook is None and not alert.generic:
            used = await _db(uses_name(self.store, tenant, alert.name))
            asked = replace(asked, alert_name_used=used)
        gate = decide(asked, candidates, self.gate_model, threshold=self.answer_threshold)
        return Retrieval(
            candidates, gate, hints, fallback_reason, asked, timings, embedding=embedding
        )

    def _ordinary_unknown(self, candidates: Candidates) -> frozenset[str]:
        """Lexemes the tenant never uses that only ordinary words of the question produced."""
        words = self.embedder.ordinary_words
        return frozenset(
            lexeme
            for lexeme, df in candidates.term_df.items()
            if df == 0
            and (surface := candidates.term_words.get(lexeme))
            and all(word in words for word in surface)
        )

    async def _search(
        self,
        tenant: str,
        question: str,
        embedding: Vectors,
        service: str | None,
        hints: ScopeHints,
        exact: bool,
    ) -> Candidates:
        return await _db(
            search(
                self.store,
                tenant=tenant,
                question=question,
                embedding=embedding,
                model=self.embedder.model_id,
                service=service,
                candidates=max(CANDIDATES_PER_RETRIEVER, self.settings.top_k),
                hints=hints,
                exact=exact,
                rank_model=self.rank_model,
            )
        )

    async def _answer(
        self, tenant: str, service: str | None, question: str, retrieval: Retrieval
    ) -> AskResult:
        context = build_context(
            retrieval.candidates.evidence,
            max_excerpts=_MAX_EXCERPTS,
            per_document=self.settings.max_chunks_per_document,
            max_chars=self.settings.context_max_chars,
        )
        started = time.perf_counter()
        # The answerer reads the question as retrieval did (without hosts, hashes and urgency;
        # an alert named as its runbook writes it); an alert post as it was pasted.
        asked = question if retrieval.alert is not None else retrieval.asked.text
        verified = await draft_verified(self.answerer, asked, context.excerpts)
        retrieval.timings_ms["answer"] = _ms_since(started)
        self.metrics.citations_dropped.inc(len(verified.dropped))
        if verified.ungrounded:
            raise AnswerProviderError(
                "answer_provider_ungrounded_response",
                "the answer provider answered without citing any excerpt",
                retryable=True,
            )
        answer = verified.answer
        answered = verified.status == "answered" and verified.citations
        lead = verified.citations[0].evidence if answered else None
        contact = owner_to_contact(question, lead) if lead else None
        line = contact_line(question, lead) if lead else None
        if line is not None:  # not a runbook's words, so not a claim to verify: labelled
            answer = f"{line}\n\n{answer}"  # "who" is what was asked: it leads
        result = self._result(
            tenant,
            service,
            retrieval,
            verified.status,
            verified.reason,
            provider=verified.provider,
            answer=answer,
            citations=verified.citations,
            dropped=list(verified.dropped),
            usage=verified.usage,
        )
        return replace(result, owner_contact=contact)

    def _result(
        self,
        tenant: str,
        service: str | None,
        retrieval: Retrieval,
        status: AskStatus,
        reason: str | None,
        *,
        provider: str | None = None,
        answer: str = "",
        citations: tuple[Citation, ...] = (),
        dropped: list[DroppedCitation] | None = None,
        usage: dict[str, int] | None = None,
    ) -> AskResult:
        return AskResult(
            status=status,
            reason_code=reason,
            answer=answer,
            citations=citations,
            evidence=self._top(retrieval.candidates.evidence),
            provider=provider or "none",
            timings_ms=dict(retrieval.timings_ms),
            tenant=tenant,
            service=service,
            dropped_citations=tuple(dropped or ()),
            fallback_reason=retrieval.fallback_reason,
            usage=usage or {},
            question_vector=_vector(retrieval.embedding),
        )

    def _error(
        self, tenant: str, service: str | None, retrieval: Retrieval | None, exc: RunbookError
    ) -> AskResult:
        if isinstance(exc, AnswerProviderError):
            self.metrics.provider_failures.labels(exc.code).inc()
        self.metrics.errors.labels(exc.code).inc()
        logger.warning("ask failed for tenant %s: %s", tenant, exc.code)
        user_message = str(exc) if isinstance(exc, QuestionError | ModelMismatchError) else ""
        return AskResult(
            status="error",
            reason_code=exc.code,
            answer=user_message,
            citations=(),
            evidence=self._top(retrieval.candidates.evidence) if retrieval else (),
            provider=self.answerer.name if isinstance(exc, AnswerProviderError) else "none",
            timings_ms=dict(retrieval.timings_ms) if retrieval else {},
            retryable=exc.retryable,
            tenant=tenant,
            service=service,
            fallback_reason=retrieval.fallback_reason if retrieval else None,
        )

    def _top(self, evidence: tuple[Evidence, ...]) -> tuple[Evidence, ...]:
        return evidence[: max(self.settings.top_k, 10)]

    async def _trace(
        self, trace_id: str, question: str, result: AskResult, retrieval: Retrieval | None
    ) -> None:
        record = TraceRecord.from_result(
            trace_id,
            result,
            candidates=retrieval.candidates if retrieval else None,
            gate_cosine=retrieval.gate.best_cosine if retrieval else None,
            question=question if self.settings.trace_text else None,
        )
        started = time.perf_counter()
        try:
            await write_trace(self.store, record)
        except (psycopg.Error, StoreError) as exc:
            # A lost trace must never cost the responder their answer.
            logger.warning("trace %s not recorded: %s", trace_id, type(exc).__name__)
        result.timings_ms["trace"] = _ms_since(started)


async def _db(awaitable: Awaitable[T]) -> T:
    """Translate database failures into ``StoreError`` once, at this boundary."""
    try:
        return await awaitable
    except psycopg.Error as exc:
        raise StoreError(f"database error: {type(exc).__name__}") from exc
    except TimeoutError as exc:  # the pool's wait for a connection
        raise StoreError("database connection pool timed out") from exc


def _vector(embedding: Vectors | None) -> tuple[float, ...] | None:
    return None if embedding is None else tuple(float(x) for x in embedding)


def _ms_since(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 2)
