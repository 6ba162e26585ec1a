"""The answerability gate: a fitted model read from data, one setting for the operating point,
alert posts whose alert the tenant never mentions abstain, and so do questions about a thing the
tenant never names."""

from __future__ import annotations

import pytest

from rag import FastEmbedder, RagService, Settings, Store
from rag.answering.answerers import ExtractiveAnswerer
from rag.gate.decision import FEATURES, GateModel

pytestmark = pytest.mark.usefixtures("demo_corpus")

ANSWERABLE = "redis is evicting keys and memory is full"


def service_with(
    store: Store, embedder: FastEmbedder, settings: Settings, **changes: object
) -> RagService:
    return RagService(
        store=store,
        embedder=embedder,
        answerer=ExtractiveAnswerer(),
        settings=settings.model_copy(update=changes),
    )


def test_shipped_gate_model_names_the_embedding_model_it_was_fitted_for(
    embedder: FastEmbedder,
) -> None:
    model = GateModel.load()
    assert model.embedding_model == embedder.model_id
    assert set(model.coefficients) == set(FEATURES)
    assert 0.0 < model.threshold < 1.0


async def test_answer_threshold_moves_the_operating_point(
    store: Store, embedder: FastEmbedder, settings: Settings
) -> None:
    shipped = await service_with(store, embedder, settings).retrieve("acme", ANSWERABLE)
    assert shipped.gate.reason is None
    strict = service_with(store, embedder, settings, answer_threshold=1.0)
    refused = await strict.retrieve("acme", ANSWERABLE)
    assert refused.gate.reason == "low_confidence"
    assert refused.gate.probability == pytest.approx(shipped.gate.probability)
    lenient = service_with(store, embedder, settings, answer_threshold=0.0)
    anything = await lenient.retrieve("acme", "who approves vacation requests for the team?")
    assert anything.gate.reason is None


async def test_alert_the_tenant_never_mentions_abstains(service: RagService) -> None:
    post = (
        "[FIRING:1] CephOSDNearFull (namespace=openshift-storage severity=warning)\n"
        "*Summary:* Utilization of storage device osd.4 has crossed 75% on host worker-2."
    )
    retrieval = await service.retrieve("globex", post)
    features = dict(retrieval.gate.features)
    assert retrieval.alert is not None and retrieval.alert.name == "CephOSDNearFull"
    assert features["unknown_name"] == 1.0
    assert retrieval.gate.reason == "low_confidence"


async def test_alert_post_is_searched_by_its_name_not_its_labels(service: RagService) -> None:
    post = (
        "[FIRING:1] KubePodCrashLooping (container=api namespace=payments "
        "pod=payments-api-7d9f8c-xk2lp severity=warning)\n*Summary:* Pod is crash looping."
    )
    retrieval = await service.retrieve("globex", post)
    top = retrieval.candidates.evidence[0]
    assert top.document_id == "kubernetes/KubePodCrashLooping"
    assert "named:kubernetes/KubePodCrashLooping" in top.hit_reasons
    assert retrieval.gate.reason is None


async def test_everyday_words_the_runbooks_never_use_are_not_evidence_to_abstain(
    service: RagService,
) -> None:
    retrieval = await service.retrieve(
        "acme", "redis blew up again this morning, keys evicted, memory full, whats going on"
    )
    # The tenant never writes "blew" or "whats" (its lexeme "what"); both are ordinary words to
    # the model, so they count neither as known nor as unknown.
    assert {"blew", "what"} <= retrieval.asked.ordinary_unknown
    assert retrieval.candidates.term_df["blew"] == 0
    assert dict(retrieval.gate.features)["unknown_share"] == 0.0
    assert retrieval.gate.reason is None


async def test_a_product_the_runbooks_never_mention_still_counts_against_answering(
    service: RagService,
) -> None:
    retrieval = await service.retrieve("acme", "mongodb blew up again this morning, memory full")
    assert "blew" in retrieval.asked.ordinary_unknown
    assert "mongodb" not in retrieval.asked.ordinary_unknown
    assert dict(retrieval.gate.features)["unknown_share"] > 0.0


async def test_a_question_about_a_thing_the_runbooks_never_name_abstains(
    service: RagService,
) -> None:
    # acme's gateway runbook rotates the HarborPay key that "lives in Vault": the verb and the
    # store match, but no runbook of the tenant ever says "token". An ordinary word unused by
    # the tenant counts nowhere, except as the word the question ends on: what it asks about.
    retrieval = await service.retrieve("acme", "how do I rotate the vault root token?")
    assert retrieval.candidates.term_df["token"] == 0
    assert "token" in retrieval.asked.ordinary_unknown
    assert dict(retrieval.gate.features)["unknown_share"] > 0.0
    assert retrieval.gate.reason == "low_confidence"


async def test_an_unused_ordinary_word_before_the_questions_subject_is_still_no_evidence(
    service: RagService,
) -> None:
    # "blew" and "morning" are unused or rare, ordinary words; the question ends on "full".
    retrieval = await service.retrieve("acme", "redis blew up this morning, memory is full")
    assert "blew" in retrieval.asked.ordinary_unknown
    assert dict(retrieval.gate.features)["unknown_share"] == 0.0
    assert retrieval.gate.reason is None
