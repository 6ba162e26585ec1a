"""The gate's evidence from an alert post's name: resolved to a runbook, or never used."""

from __future__ import annotations

import pytest

from rag import RagService, Store
from rag.retrieval.name_vocabulary import uses_name

pytestmark = pytest.mark.usefixtures("demo_corpus")


async def features_of(service: RagService, tenant: str, post: str) -> dict[str, float]:
    retrieval = await service.retrieve(tenant, service.check_question(post))
    return dict(retrieval.gate.features)


async def test_snake_case_alert_the_tenant_never_mentions_abstains(service: RagService) -> None:
    # Postgres splits the name into ceph, osd, near, full: words alone say nothing.
    post = (
        "[FIRING:1] ceph_osd_near_full (namespace=openshift-storage severity=warning)\n"
        "*Summary:* Utilization of storage device osd.4 has crossed 75% on host worker-2."
    )
    retrieval = await service.retrieve("globex", service.check_question(post))

    assert retrieval.alert is not None and retrieval.alert.runbook is None
    assert retrieval.asked.alert_name_used is False
    assert dict(retrieval.gate.features)["unknown_name"] == 1.0
    assert retrieval.gate.reason == "low_confidence"


async def test_snake_case_alert_named_like_a_runbook_is_resolved_not_unknown(
    service: RagService,
) -> None:
    post = "[FIRING:1] kube_pod_crash_looping (namespace=payments severity=warning)"

    found = await features_of(service, "globex", post)

    assert found["resolved"] == 1.0
    assert found["unknown_name"] == 0.0


async def test_alert_name_the_tenant_writes_in_its_runbooks_is_not_unknown(
    service: RagService,
) -> None:
    # No runbook is called CrashLoopBackOff, but globex's runbooks use the word.
    post = "[FIRING:1] crash_loop_back_off (namespace=payments severity=warning)"
    retrieval = await service.retrieve("globex", service.check_question(post))

    assert retrieval.alert is not None and retrieval.alert.runbook is None
    assert retrieval.asked.alert_name_used is True
    assert dict(retrieval.gate.features)["unknown_name"] == 0.0


async def test_generic_alert_with_a_component_is_not_judged_by_its_name(
    service: RagService,
) -> None:
    # GitLab's one rule for every component: the name is in no runbook, the component is.
    post = (
        "[FIRING:1] component_saturation_slo_out_of_bounds "
        "(component=settlement_queue env=prod severity=s3)\n"
        "*Summary:* The settlement queue has a saturation exceeding SLO"
    )
    retrieval = await service.retrieve("globex", service.check_question(post))

    assert retrieval.alert is not None and retrieval.alert.generic
    assert retrieval.asked.alert_name_used is None
    assert dict(retrieval.gate.features)["unknown_name"] == 0.0


async def test_runbook_url_resolution_is_evidence_to_answer(service: RagService) -> None:
    post = (
        "[FIRING:1] SLOBudgetBurn (severity=critical)\n"
        "runbook_url = https://wiki.globex.example/runbooks/batch/cron-job-failures\n"
    )
    retrieval = await service.retrieve("globex", service.check_question(post))

    assert dict(retrieval.gate.features)["resolved"] == 1.0
    assert retrieval.gate.reason is None


async def test_a_question_without_an_alert_is_never_resolved(service: RagService) -> None:
    found = await features_of(service, "globex", "pods keep crash looping after a deploy")

    assert found["resolved"] == 0.0


async def test_uses_name_finds_the_name_written_as_one_word_in_the_tenant_only(
    store: Store,
) -> None:
    assert await uses_name(store, "globex", "crash_loop_back_off")
    assert await uses_name(store, "globex", "crash-loop-back-off")
    assert not await uses_name(store, "initech", "crash_loop_back_off")
    assert not await uses_name(store, "globex", "ceph_osd_near_full")
