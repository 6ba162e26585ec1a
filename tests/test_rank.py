"""Fusion: exact names win, the heading's intent meets the question's, a runbook's sections come
together; and the gate's logistic fit recovers a separable rule and its operating point."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from rag.evidence import Evidence
from rag.gate_fit import choose_threshold, fit_logistic
from rag.rank import DEFAULT_WEIGHTS, ScopeHints, fuse, question_intents


def chunk(
    chunk_id: int, document: str, section: str, *, vector: int | None, keyword: int | None
) -> Evidence:
    title = document.rsplit("/", 1)[-1]
    return Evidence(
        chunk_id=chunk_id,
        document_id=document,
        version=1,
        title=title,
        heading_path=(title, section),
        content="text",
        url=None,
        owner=None,
        updated=None,
        service=None,
        cosine=0.5,
        vector_rank=vector,
        keyword_rank=keyword,
        score=0.0,
    )


def test_question_intents_follow_how_on_call_engineers_ask() -> None:
    assert "mitigation" in question_intents("how do i get them back in sync")
    assert "diagnosis" in question_intents("pv stuck failing to provision, where do i look")
    assert "mitigation" not in question_intents("how do i check the rollout history")
    assert "meaning" in question_intents("what does KubeletDown mean")


def test_exact_alert_name_outranks_a_better_scored_section_of_another_runbook() -> None:
    found = [
        chunk(1, "kubernetes/KubeDeploymentReplicasMismatch", "Meaning", vector=1, keyword=1),
        chunk(2, "kubernetes/KubeStatefulSetReplicasMismatch", "Meaning", vector=2, keyword=3),
    ]
    hints = ScopeHints(documents=frozenset({"kubernetes/KubeStatefulSetReplicasMismatch"}))
    ranked = fuse(found, hints, "KubeStatefulSetReplicasMismatch")
    assert ranked[0].document_id == "kubernetes/KubeStatefulSetReplicasMismatch"
    assert "named:kubernetes/KubeStatefulSetReplicasMismatch" in ranked[0].hit_reasons


def test_mitigation_section_wins_a_tie_for_a_how_do_i_fix_question() -> None:
    found = [
        chunk(1, "etcd/etcdNoLeader", "Meaning", vector=1, keyword=2),
        chunk(2, "etcd/etcdNoLeader", "Mitigation", vector=2, keyword=1),
    ]
    ranked = fuse(found, ScopeHints(), "etcd has no leader, how do i fix it")
    assert [e.heading_path[1] for e in ranked] == ["Mitigation", "Meaning"]
    assert "intent:mitigation" in ranked[0].hit_reasons


def test_document_support_lifts_the_runbook_with_more_strong_sections() -> None:
    found = [
        chunk(1, "node/NodeFilesystemSpaceFillingUp", "Notes", vector=1, keyword=None),
        chunk(2, "node/NodeFilesystemFilesFillingUp", "Notes", vector=2, keyword=None),
        chunk(3, "node/NodeFilesystemFilesFillingUp", "Details", vector=3, keyword=None),
    ]
    without = fuse(found, ScopeHints(), "inodes", replace(DEFAULT_WEIGHTS, document=0.0))
    with_support = fuse(found, ScopeHints(), "inodes", replace(DEFAULT_WEIGHTS, document=1.0))
    assert without[0].document_id == "node/NodeFilesystemSpaceFillingUp"
    assert with_support[0].document_id == "node/NodeFilesystemFilesFillingUp"


def test_logistic_fit_separates_and_the_threshold_keeps_the_asked_coverage() -> None:
    rng = np.random.default_rng(7)
    answerable = rng.normal(0.7, 0.05, size=(40, 1))
    unanswerable = rng.normal(0.4, 0.05, size=(40, 1))
    x = np.vstack([answerable, unanswerable])
    y = np.concatenate([np.ones(40), np.zeros(40)])
    weights, intercept = fit_logistic(x, y)
    probabilities = 1 / (1 + np.exp(-(x @ weights + intercept)))
    assert weights[0] > 0
    threshold = choose_threshold(probabilities, y, min_coverage=0.95)
    assert (probabilities[y == 1] >= threshold).mean() >= 0.95
    assert (probabilities[y == 0] < threshold).mean() >= 0.9
