"""Alert posts find their runbook by name in any spelling or by the rule's ``runbook_url``, and
keep their line structure through the service so the parser can read them."""

from __future__ import annotations

import pytest

from rag import RagService

pytestmark = pytest.mark.usefixtures("demo_corpus")


async def test_kebab_case_alert_name_names_the_camel_case_runbook(service: RagService) -> None:
    retrieval = await service.retrieve(
        "globex", "[FIRING:1] kube-pod-crash-looping (namespace=payments severity=warning)"
    )

    assert retrieval.alert is not None
    assert retrieval.alert.runbook == "kubernetes/KubePodCrashLooping"
    assert "kubernetes/KubePodCrashLooping" in retrieval.hints.documents
    top = retrieval.candidates.evidence[0]
    assert top.document_id == "kubernetes/KubePodCrashLooping"
    assert "named:kubernetes/KubePodCrashLooping" in top.hit_reasons
    assert dict(retrieval.gate.features)["resolved"] == 1.0


async def test_alert_suffix_on_the_name_still_names_the_runbook(service: RagService) -> None:
    retrieval = await service.retrieve(
        "globex", "[FIRING:1] TlsCertificateExpiryAlert (secret=api-tls severity=critical)"
    )

    assert retrieval.alert is not None
    assert retrieval.alert.runbook == "security/tls-certificate-expiry"
    assert retrieval.candidates.evidence[0].document_id == "security/tls-certificate-expiry"


async def test_runbook_url_names_the_runbook_whatever_the_alert_is_called(
    service: RagService,
) -> None:
    post = (
        "[FIRING:1] component_saturation_slo_out_of_bounds\n"
        "Labels:\n"
        " - alertname = component_saturation_slo_out_of_bounds\n"
        " - component = settlement_queue\n"
        "Annotations:\n"
        " - runbook_url = https://wiki.globex.example/runbooks/ledger/settlement-queue-backlog\n"
    )
    retrieval = await service.retrieve("globex", service.check_question(post))

    assert retrieval.alert is not None
    assert retrieval.alert.runbook == "ledger/settlement-queue-backlog"
    assert retrieval.candidates.evidence[0].document_id == "ledger/settlement-queue-backlog"


async def test_a_runbook_url_alone_brings_its_runbook_into_the_candidates(
    service: RagService,
) -> None:
    post = (
        "[FIRING:1] SLOBudgetBurn (severity=critical)\n"
        "runbook_url = https://wiki.globex.example/runbooks/batch/cron-job-failures\n"
    )
    retrieval = await service.retrieve("globex", service.check_question(post))

    assert retrieval.alert is not None and retrieval.alert.runbook == "batch/cron-job-failures"
    assert "cron job failures" in retrieval.alert.search_text()
    assert retrieval.candidates.evidence[0].document_id == "batch/cron-job-failures"


async def test_a_name_no_runbook_carries_resolves_to_nothing(service: RagService) -> None:
    retrieval = await service.retrieve("globex", "[FIRING:1] CephOSDNearFull (severity=warning)")

    assert retrieval.alert is not None and retrieval.alert.runbook is None
    assert not retrieval.hints.documents


def test_checked_question_keeps_the_lines_of_a_pasted_alert(service: RagService) -> None:
    post = "[FIRING:1]   KubePodCrashLooping\n\n  summary:  Pod is  crash looping.\n"

    assert service.check_question(post) == (
        "[FIRING:1] KubePodCrashLooping\nsummary: Pod is crash looping."
    )


async def test_pasted_alert_description_reaches_the_search_through_the_service(
    service: RagService,
) -> None:
    post = (
        "[FIRING:1] KubePodCrashLooping\n"
        "Annotations:\n"
        " - description = Pod payments/api-7d9f8c-xk2lp is restarting in CrashLoopBackOff.\n"
        " - summary = Pod is crash looping.\n"
    )
    retrieval = await service.retrieve("globex", service.check_question(post))

    assert retrieval.alert is not None and retrieval.alert.summary is not None
    assert "is restarting in CrashLoopBackOff." in retrieval.alert.summary
