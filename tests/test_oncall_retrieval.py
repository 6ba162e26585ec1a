"""Issue 38 items 2-4 without a database: a named alert's runbook leads whatever workload names
come with it, "who do I page" opens on the escalation section (or names the owner), and a
product the tenant never names abstains before any model."""

from __future__ import annotations

from dataclasses import replace

from rag.gate.decision import FEATURES, GateModel, GateQuery, decide
from rag.gate.foreign_subjects import foreign_subjects
from rag.retrieval.catalog import TenantCatalog
from rag.retrieval.escalation import (
    NO_CONTACT_LINE,
    asks_escalation,
    contact_line,
    owner_line,
    owner_to_contact,
)
from rag.retrieval.evidence import Evidence
from rag.retrieval.rank import ScopeHints, question_intents
from rag.retrieval.ranker import document_first, fuse
from rag.retrieval.retrieve import Candidates
from rag.retrieval.runbook_names import RunbookNames

RUNBOOKS = (
    "kubernetes/KubePodCrashLooping",
    "alertmanager/AlertmanagerClusterCrashlooping",
    "kubernetes/KubeJobFailed",
    "machine-config-operator/MachineConfigControllerDrainError",
    "injection",
)


def catalog() -> TenantCatalog:
    documents = {}
    spelled = []
    for document in RUNBOOKS:
        documents[document.lower()] = document
        name = document.rsplit("/", 1)[-1]
        documents.setdefault(name.lower(), document)
        spelled.append((name, document))
    return TenantCatalog(
        frozenset(),
        documents,
        frozenset({"model"}),
        100,
        runbook_names=RunbookNames.build(spelled),
    )


def chunk(
    chunk_id: int,
    document: str,
    section: str,
    *,
    vector: int | None,
    keyword: int | None,
    content: str = "text",
    owner: str | None = None,
    cosine: float = 0.5,
) -> Evidence:
    title = document.rsplit("/", 1)[-1]
    return Evidence(
        chunk_id=chunk_id,
        document_id=document,
        version=1,
        title=title,
        heading_path=(title, section),
        content=content,
        url=None,
        owner=owner,
        updated=None,
        service=None,
        cosine=cosine,
        vector_rank=vector,
        keyword_rank=keyword,
        score=0.0,
    )


def test_an_alert_named_in_a_question_resolves_to_its_runbook_in_any_spelling() -> None:
    tenant = catalog()
    assert (
        tenant.alert_named_in("KubePodCrashLooping on alertmanager-main NOW")
        == "kubernetes/KubePodCrashLooping"
    )
    # Typed in lower case as one word, or shortened to an acronym.
    assert tenant.alert_named_in("kubejobfailed on backup-cronjob") == "kubernetes/KubeJobFailed"
    assert (
        tenant.alert_named_in("MCCDrainError on worker-1, what do i do")
        == "machine-config-operator/MachineConfigControllerDrainError"
    )
    hints = tenant.hints_in("KubePodCrashLooping on alertmanager-main, how do i stop it")
    assert hints.alert_document == "kubernetes/KubePodCrashLooping"


def test_an_alert_name_is_searched_as_its_runbook_writes_it() -> None:
    tenant = catalog()
    assert tenant.with_runbook_names("kubejobfailed on backup-cronjob, can i rerun it") == (
        "KubeJobFailed on backup-cronjob, can i rerun it"
    )
    assert tenant.with_runbook_names("MCCDrainError on worker-1") == (
        "MachineConfigControllerDrainError on worker-1"
    )
    assert tenant.with_runbook_names("sidecar injection not happening") == (
        "sidecar injection not happening"
    )


def test_an_alert_name_pasted_with_a_typo_names_its_runbook_and_is_searched_respelled() -> None:
    tenant = catalog()
    question = "KubePodCrashLoopnig on payments-api-7d9f8c-xk2lp, what now"
    assert tenant.alert_named_in(question) == "kubernetes/KubePodCrashLooping"
    assert tenant.with_runbook_names(question) == (
        "KubePodCrashLooping on payments-api-7d9f8c-xk2lp, what now"
    )
    assert tenant.alert_named_in("kube_job_faild on backup-cronjob") == "kubernetes/KubeJobFailed"
    # A lower-case word is no alert-shaped name: its typo names nothing.
    assert tenant.alert_named_in("kubejobfaild on backup-cronjob") is None


def test_no_single_alert_is_named_by_two_alerts_or_by_an_ordinary_word() -> None:
    tenant = catalog()
    assert tenant.alert_named_in("KubePodCrashLooping and KubeJobFailed at once") is None
    # A one-word runbook name is an ordinary word too ("sidecar injection not happening").
    assert tenant.alert_named_in("sidecar injection not happening") is None
    assert tenant.alert_named_in("alertmanager pods crashlooping, what usually fixes that") is None


def test_the_named_alerts_runbook_opens_the_answer_over_a_workloads_runbook() -> None:
    found = [
        chunk(1, "alertmanager/AlertmanagerClusterCrashlooping", "Mitigation", vector=1, keyword=1),
        chunk(2, "alertmanager/AlertmanagerClusterCrashlooping", "Meaning", vector=2, keyword=2),
        chunk(3, "kubernetes/KubePodCrashLooping", "Mitigation", vector=5, keyword=6),
        chunk(4, "kubernetes/KubePodCrashLooping", "Impact", vector=7, keyword=None),
    ]
    question = "KubePodCrashLooping on alertmanager-main, how do i stop it"
    plain = fuse(found, ScopeHints(), question, term_df={}, tenant_chunks=100)
    assert plain[0].document_id == "alertmanager/AlertmanagerClusterCrashlooping"
    hints = ScopeHints(alert_document="kubernetes/KubePodCrashLooping")
    ranked = fuse(found, hints, question, term_df={}, tenant_chunks=100)
    assert ranked[0].document_id == "kubernetes/KubePodCrashLooping"
    # The workload's own runbook may follow.
    assert "alertmanager/AlertmanagerClusterCrashlooping" in {e.document_id for e in ranked[1:]}


def test_document_first_moves_only_that_documents_first_item() -> None:
    documents = ["a", "a", "b", "c", "b"]
    assert document_first([0, 1, 2, 3, 4], documents, "b") == [2, 0, 1, 3, 4]
    assert document_first([0, 1, 2, 3, 4], documents, "z") == [0, 1, 2, 3, 4]


def test_asking_whom_to_page_wake_call_or_escalate_to_is_escalation() -> None:
    for question in (
        "who do i page for KubeletClientCertificateExpiration",
        "who do i wake up for etcdInsufficientMembers at 3am",
        "KubeAPIDown, who do i escalate to",
        "how do i get ODF engineering on the phone",
        "how do i call cloudflare support",
        "who's on call for the database?",
    ):
        assert asks_escalation(question), question
    for question in ("how do i fix it", "what does this alert mean", "page size too big"):
        assert not asks_escalation(question), question


def test_a_question_asking_whom_to_page_opens_the_runbook_on_its_escalation_section() -> None:
    document = "kubernetes/KubePodCrashLooping"
    found = [
        chunk(1, document, "Mitigation", vector=1, keyword=1, content="kubectl rollout undo"),
        chunk(2, document, "Diagnosis", vector=2, keyword=2),
        chunk(3, document, "Escalation", vector=6, keyword=None, content="Page team-platform."),
        chunk(4, "other/Runbook", "Mitigation", vector=3, keyword=3),
    ]
    ranked = fuse(
        found, ScopeHints(), "who do i page for KubePodCrashLooping", term_df={}, tenant_chunks=9
    )
    assert ranked[0].heading_path[-1] == "Escalation"
    assert ranked[0].document_id == document


def test_without_an_escalation_heading_it_opens_on_a_section_that_says_whom_to_page() -> None:
    document = "patroni/rails-sql-apdex-slow"
    found = [
        chunk(1, document, "Dashboards", vector=1, keyword=1, content="Open the dashboard."),
        chunk(
            2,
            document,
            "What to do in the first 5 minutes",
            vector=4,
            keyword=3,
            content="See if there is a quick recovery, if not page the IMOC.",
        ),
    ]
    ranked = fuse(found, ScopeHints(), "when do i page the IMOC", term_df={}, tenant_chunks=9)
    assert ranked[0].chunk_id == 2


def test_the_owner_is_who_to_contact_only_when_the_lead_section_names_no_escalation() -> None:
    lead = chunk(1, "features/kill-switch", "Procedure", vector=1, keyword=1, owner="team-devex")
    assert owner_to_contact("who do i page for the kill switch", lead) == "team-devex"
    assert owner_to_contact("how do i flip the kill switch", lead) is None
    escalation = chunk(
        2, "features/kill-switch", "Escalation", vector=1, keyword=1, owner="team-devex"
    )
    assert owner_to_contact("who do i page for the kill switch", escalation) is None
    ownerless = chunk(3, "features/kill-switch", "Procedure", vector=1, keyword=1)
    assert owner_to_contact("who do i page for the kill switch", ownerless) is None
    assert "team-devex" in owner_line("team-devex")
    assert "owner" in owner_line("team-devex")


def test_a_who_do_i_page_answer_says_so_when_the_runbook_names_nobody() -> None:
    ownerless = chunk(3, "features/kill-switch", "Procedure", vector=1, keyword=1)
    assert contact_line("who do i page for the kill switch", ownerless) == NO_CONTACT_LINE
    assert contact_line("how do i flip the kill switch", ownerless) is None
    owned = chunk(1, "features/kill-switch", "Procedure", vector=1, keyword=1, owner="team-devex")
    assert contact_line("who do i page for the kill switch", owned) == owner_line("team-devex")
    escalation = chunk(2, "features/kill-switch", "Escalation", vector=1, keyword=1)
    assert contact_line("who do i page for the kill switch", escalation) is None


def test_only_listed_products_the_tenant_never_holds_are_foreign() -> None:
    term_df = {"mongodb": 0, "replica": 40, "primari": 12, "elect": 0, "redi": 30}
    term_words = {
        "mongodb": ("mongodb",),
        "replica": ("replica",),
        "primari": ("primary",),
        "elect": ("elections",),
        "redi": ("redis",),
    }
    # "elections" is unknown too, but an ordinary word; redis is held by the tenant.
    assert foreign_subjects(term_df, term_words) == ("mongodb",)
    assert foreign_subjects({"redi": 30}, {"redi": ("redis",)}) == ()


def test_the_gate_abstains_on_a_product_the_tenant_never_names_whatever_it_scores() -> None:
    evidence = tuple(
        chunk(i, "docs/patroni/patroni-management", "Failover", vector=i, keyword=i, cosine=0.9)
        for i in range(1, 6)
    )
    words: dict[str, tuple[str, ...]] = {
        "replica": ("replica",),
        "primari": ("primary",),
        "failov": ("failover",),
    }
    covered = Candidates(
        evidence=evidence,
        vector_hits=5,
        keyword_hits=5,
        term_df={"replica": 40, "primari": 12, "failov": 9},
        tenant_chunks=500,
        term_words=words,
    )
    foreign = Candidates(
        evidence=evidence,
        vector_hits=5,
        keyword_hits=5,
        term_df={"replica": 40, "primari": 12, "failov": 9, "mongodb": 0},
        tenant_chunks=500,
        term_words={**words, "mongodb": ("mongodb",)},
    )
    model = GateModel("model", {name: 0.0 for name in FEATURES}, 5.0, 0.5)
    asked = GateQuery("replica primary failover", frozenset())
    assert decide(asked, covered, model, threshold=0.5).reason is None
    gate = decide(asked, foreign, model, threshold=0.5)
    assert gate.reason == "low_confidence"
    assert dict(gate.rules)["foreign_subject"] == 1.0


def test_the_gate_answers_a_question_naming_an_alert_whose_runbook_is_a_candidate() -> None:
    evidence = tuple(
        chunk(i, "kubernetes/KubeNodeNotReady", "Impact", vector=i, keyword=i, cosine=0.3)
        for i in range(1, 4)
    )
    candidates = Candidates(
        evidence=evidence,
        vector_hits=3,
        keyword_hits=3,
        term_df={"kubenodenotreadi": 3, "serious": 0},
        tenant_chunks=500,
        term_words={"kubenodenotreadi": ("kubenodenotready",), "serious": ("serious",)},
    )
    model = GateModel("model", {name: 0.0 for name in FEATURES}, -5.0, 0.5)
    asked = GateQuery("KubeNodeNotReady is it serious", frozenset())
    assert decide(asked, candidates, model, threshold=0.5).reason == "low_confidence"
    named = GateQuery(
        "KubeNodeNotReady is it serious", frozenset(), named_runbook="kubernetes/KubeNodeNotReady"
    )
    gate = decide(named, candidates, model, threshold=0.5)
    assert gate.reason is None
    assert dict(gate.rules)["named_runbook"] == 1.0
    # Named but not among the candidates: the model decides.
    elsewhere = GateQuery("x", frozenset(), named_runbook="kubernetes/KubeletDown")
    assert decide(elsewhere, candidates, model, threshold=0.5).reason == "low_confidence"


def test_a_product_beside_a_named_alert_is_where_it_fired_not_the_subject() -> None:
    evidence = tuple(
        chunk(i, "kubernetes/CPUThrottlingHigh", "Mitigation", vector=i, keyword=i, cosine=0.7)
        for i in range(1, 4)
    )
    candidates = Candidates(
        evidence=evidence,
        vector_hits=3,
        keyword_hits=3,
        term_df={"cputhrottlinghigh": 3, "nginx": 0},
        tenant_chunks=500,
        term_words={"cputhrottlinghigh": ("cputhrottlinghigh",), "nginx": ("nginx",)},
    )
    model = GateModel("model", {name: 0.0 for name in FEATURES}, 5.0, 0.5)
    named = GateQuery(
        "CPUThrottlingHigh namespace ingress-nginx",
        frozenset(),
        named_runbook="kubernetes/CPUThrottlingHigh",
    )
    assert decide(named, candidates, model, threshold=0.5).reason is None
    unnamed = GateQuery("cpu throttling in ingress-nginx", frozenset())
    assert decide(unnamed, candidates, model, threshold=0.5).reason == "low_confidence"


def test_another_runbooks_contacts_lead_only_when_they_are_about_the_question() -> None:
    search = "search-indexer"
    ledger = "ledger-export"
    found = [
        replace(
            chunk(1, search, "Mitigation", vector=1, keyword=1), matched_terms=("search", "index")
        ),
        replace(chunk(2, ledger, "Escalation", vector=2, keyword=2), matched_terms=("page",)),
    ]
    question = "search indexer stuck, who do I page?"
    ranked = fuse(found, ScopeHints(), question, term_df={}, tenant_chunks=9)
    assert ranked[0].document_id == search
    on_topic = [found[0], replace(found[1], matched_terms=("page", "search"))]
    ranked = fuse(on_topic, ScopeHints(), question, term_df={}, tenant_chunks=9)
    assert ranked[0].document_id == ledger


def test_an_alert_firing_on_a_host_asks_what_to_do_not_what_the_alert_means() -> None:
    # Test row pc09 read aloud: "firing on <host>" says where it fired; the answer opened on
    # Meaning when the on-call asked what to do.
    assert question_intents("etcdNoLeader firing on etcd what do i do") == {"mitigation"}
    assert "meaning" in question_intents("what does KubeHpaMaxedOut fire on")
    assert "meaning" in question_intents("when does KubeHpaMaxedOut fire, what is the threshold")
