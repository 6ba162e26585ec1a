"""CI's answer-quality gate on runbooks we did not write: the prometheus-operator collection.

The collection (``evals/collections/prometheus-operator``, 108 runbooks) is embedded once per
session next to the demo corpus; its dev-split questions (plain questions and alert posts) run
through retrieval, the gate and the full answer path. The floors are the figures measured on
the dev split (docs/how-it-works.md, "How the gate was calibrated") minus a small margin.
The full dev/test evaluation over all six public tenants is ``python -m rag.eval_public``
(docs/how-it-works.md, "Evaluation").
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import pytest_asyncio

from rag import FastEmbedder, IngestReport, RagService, Settings, Store, ingest_limits, ingest_path
from rag.answering.answerers._passages import cut_passages
from rag.evaluation.evaluate import GoldenQuestion, evaluate, load_golden
from tests.conftest import GOLDEN, REPO

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("demo_corpus", "prom_collection")]

PROM_ROOT = REPO / "evals" / "collections" / "prometheus-operator" / "content" / "runbooks"
DEV_FILES = (
    REPO / "evals" / "public" / "dev.jsonl",
    REPO / "evals" / "public" / "alerts-dev.jsonl",
)

# Measured on this subset (prom tenant, dev split: 45 answerable, 15 abstain) with the shipped
# gate and ranker (placeholders last, section kinds from the deepest heading, content length in
# the section weights, ordinary words out of the gate's unknown share; the gate refit with etcd
# and Istio in the dev split gives the same figures here) — recall@5 0.978, MRR
# 0.861, document recall@5 0.978, abstain accuracy 1.000, coverage 0.978, first citation in a
# gold runbook 0.932 — minus about one question of each kind.
MIN_RECALL_AT_5 = 0.95
MIN_MRR = 0.84
MIN_DOCUMENT_RECALL_AT_5 = 0.95
MIN_ABSTAIN_ACCURACY = 0.93
MIN_ANSWER_COVERAGE = 0.95
MIN_FIRST_CITATION_IN_GOLD_DOCUMENT = 0.90
# The alert posts of that subset alone (11 answerable, 3 abstain), which the mixed figures above
# would let slip: all correct on dev (recall@5, MRR, coverage and abstain accuracy 1.0), minus
# one post of each kind.
ALERT_DEV_FILE = REPO / "evals" / "public" / "alerts-dev.jsonl"
MIN_ALERT_RECALL_AT_5 = 0.90
MIN_ALERT_MRR = 0.90
MIN_ALERT_ABSTAIN_ACCURACY = 0.66
MIN_ALERT_ANSWER_COVERAGE = 0.90

_ASSIGNMENT = re.compile(r"(?:export\s+)?[A-Z][A-Z0-9_]*=\S")
_FENCE = re.compile(r"^(`{3,}|~{3,})[^\n]*\n(?P<body>.*?)\n\1$", re.M | re.S)


@pytest_asyncio.fixture(scope="session", loop_scope="session")
async def prom_collection(store: Store, embedder: FastEmbedder, settings: Settings) -> IngestReport:
    return await ingest_path(
        store, embedder, PROM_ROOT, tenant="prom", prune=False, limits=ingest_limits(settings)
    )


def prom_dev_questions(tmp_path: Path, files: tuple[Path, ...] = DEV_FILES) -> list[GoldenQuestion]:
    rows = [
        line
        for path in files
        for line in path.read_text(encoding="utf-8").splitlines()
        if line.strip() and json.loads(line)["tenant"] == "prom"
    ]
    subset = tmp_path / "prom-dev.jsonl"
    subset.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return load_golden(subset)


async def test_public_collection_meets_the_dev_figures(service: RagService, tmp_path: Path) -> None:
    report = await evaluate(service, prom_dev_questions(tmp_path), k=5, answers=True)
    summary = json.dumps({k: v for k, v in report.items() if k != "per_question"})
    misses = [q for q in report["per_question"] if not q["correct"]]
    assert report["n_answerable"] >= 40 and report["n_abstain"] >= 10, summary
    assert report["recall_at_k"] >= MIN_RECALL_AT_5, (summary, misses)
    assert report["mrr"] >= MIN_MRR, (summary, misses)
    assert report["document_recall_at_k"] >= MIN_DOCUMENT_RECALL_AT_5, (summary, misses)
    assert report["abstain_accuracy"] >= MIN_ABSTAIN_ACCURACY, (summary, misses)
    assert report["answer_coverage"] >= MIN_ANSWER_COVERAGE, (summary, misses)
    assert report["first_citation_in_gold_document"] >= MIN_FIRST_CITATION_IN_GOLD_DOCUMENT, summary


async def test_alert_posts_meet_the_dev_figures(service: RagService, tmp_path: Path) -> None:
    report = await evaluate(service, prom_dev_questions(tmp_path, (ALERT_DEV_FILE,)), k=5)
    summary = json.dumps({k: v for k, v in report.items() if k != "per_question"})
    misses = [q for q in report["per_question"] if not q["correct"]]
    assert report["n_answerable"] >= 10 and report["n_abstain"] >= 3, summary
    assert report["recall_at_k"] >= MIN_ALERT_RECALL_AT_5, (summary, misses)
    assert report["mrr"] >= MIN_ALERT_MRR, (summary, misses)
    assert report["abstain_accuracy"] >= MIN_ALERT_ABSTAIN_ACCURACY, (summary, misses)
    assert report["answer_coverage"] >= MIN_ALERT_ANSWER_COVERAGE, (summary, misses)


async def test_no_answer_shows_a_truncated_code_block(service: RagService, tmp_path: Path) -> None:
    questions = prom_dev_questions(tmp_path) + load_golden(GOLDEN)
    code_answers = 0
    for golden in questions:
        result = await service.ask(golden.tenant, golden.question, service=golden.service)
        if result.status != "answered":
            continue
        assert result.answer.count("```") % 2 == 0, (golden.id, result.answer)
        whole = {
            passage.code.body
            for citation in result.citations
            for passage in cut_passages(citation.evidence.content)
            if passage.code is not None
        }
        for block in _FENCE.finditer(result.answer):
            code_answers += 1
            body = block.group("body")
            if body in whole:
                continue
            # Otherwise the assignment of a variable the next command uses ("With `R` set as
            # in …"): a whole command out of one of the runbook's blocks, never cut at a
            # continuation line.
            assert _ASSIGNMENT.match(body) and not body.rstrip().endswith("\\"), (golden.id, body)
            assert any(body in code for code in whole), (golden.id, body)
        assert "<!--" not in result.answer, golden.id
        assert re.search(r"^\[[^\]]+\]:\s*\S", result.answer, re.M) is None, golden.id
    assert code_answers >= 10, "the check must see code blocks to mean anything"
