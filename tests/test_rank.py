"""The learned ranker: exact names win, the heading's intent and words meet the question's; the
pairwise fit learns what puts the gold row first, the section fit what puts the gold section
first within its runbook; the gate's logistic fit recovers a separable rule and its operating
point."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from rag.evaluation.gate_fit import choose_threshold
from rag.evaluation.logistic import fit_logistic
from rag.evaluation.rank_fit import (
    RankingCase,
    cross_validated_mrr,
    fit_ranking,
    fit_sections,
    reciprocal_rank,
    tenant_held_out_mrr,
)
from rag.retrieval.evidence import Evidence
from rag.retrieval.rank import (
    ScopeHints,
    is_placeholder,
    question_intents,
    section_headings,
    section_intents,
    sectioned_documents,
    under_section_word,
)
from rag.retrieval.rank_features import FEATURES, candidate_features
from rag.retrieval.ranker import (
    RankModel,
    best_opening_first,
    first_runbook_opens_with,
    fuse,
    sections_in_place,
)


def chunk(
    chunk_id: int,
    document: str,
    section: str,
    *,
    vector: int | None,
    keyword: int | None,
    matched: tuple[str, ...] = (),
    content: str = "text",
    headings: tuple[str, ...] = (),
) -> Evidence:
    title = document.rsplit("/", 1)[-1]
    return Evidence(
        chunk_id=chunk_id,
        document_id=document,
        version=1,
        title=title,
        heading_path=(title, *(headings or (section,))),
        content=content,
        url=None,
        owner=None,
        updated=None,
        service=None,
        cosine=0.5,
        vector_rank=vector,
        keyword_rank=keyword,
        score=0.0,
        matched_terms=matched,
    )


def case(
    number: int, rows: np.ndarray, gold: np.ndarray, documents: tuple[str, ...], tenant: str
) -> RankingCase:
    return RankingCase(
        f"q{number}", rows, gold, documents, tenant, np.zeros(len(documents), dtype=bool)
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
    ranked = fuse(found, hints, "KubeStatefulSetReplicasMismatch", term_df={}, tenant_chunks=10)
    assert ranked[0].document_id == "kubernetes/KubeStatefulSetReplicasMismatch"
    assert "named:kubernetes/KubeStatefulSetReplicasMismatch" in ranked[0].hit_reasons


def test_mitigation_section_wins_a_tie_for_a_how_do_i_fix_question() -> None:
    found = [
        chunk(1, "etcd/etcdNoLeader", "Meaning", vector=1, keyword=2),
        chunk(2, "etcd/etcdNoLeader", "Mitigation", vector=2, keyword=1),
    ]
    ranked = fuse(
        found, ScopeHints(), "etcd has no leader, how do i fix it", term_df={}, tenant_chunks=10
    )
    assert [e.heading_path[1] for e in ranked] == ["Mitigation", "Meaning"]
    assert "intent:mitigation" in ranked[0].hit_reasons


def test_section_whose_heading_holds_the_questions_rare_word_wins_within_the_runbook() -> None:
    document = "kubernetes/KubePersistentVolumeFillingUp"
    found = [
        chunk(1, document, "Details", vector=1, keyword=1, matched=("volum", "resiz")),
        chunk(2, document, "Resize the volume", vector=2, keyword=2, matched=("volum", "resiz")),
    ]
    # Both chunks hold both words; only the second's heading does, and "resiz" is rare here.
    term_df = {"volum": 40, "resiz": 2, "stuck": 30}
    ranked = fuse(found, ScopeHints(), "volume resize is stuck", term_df=term_df, tenant_chunks=500)
    assert ranked[0].heading_path[1] == "Resize the volume"


def _document_rank_by_document(found: list[Evidence]) -> dict[str, float]:
    rows = candidate_features(found, ScopeHints(), "disk full", term_df={}, tenant_chunks=10)
    column = FEATURES.index("document_rank")
    return {e.document_id: row[column] for e, row in zip(found, rows, strict=True)}


def test_document_rank_is_one_over_the_place_when_each_document_brings_one_candidate() -> None:
    found = [chunk(i, f"d{i}", "Meaning", vector=i, keyword=None) for i in range(1, 5)]
    assert _document_rank_by_document(found) == {"d1": 1.0, "d2": 0.5, "d3": 1 / 3, "d4": 0.25}


def test_document_rank_counts_places_in_the_lists_candidates_per_document() -> None:
    # Two runbooks, three sections each: the second runbook is one runbook's worth of
    # candidates (three) below the first, so it keeps 1 / (1 + 1/3) rather than 1/2.
    found = [
        chunk(rank, f"d{1 + (rank - 1) // 3}", f"s{rank}", vector=rank, keyword=None)
        for rank in range(1, 7)
    ]
    assert _document_rank_by_document(found) == {"d1": 1.0, "d2": 0.75}


def test_shipped_rank_model_weighs_every_feature_for_its_embedding_model() -> None:
    model = RankModel.load()
    assert model.embedding_model.startswith("sentence-transformers/all-MiniLM-L6-v2")
    assert len(model.weights) == len(FEATURES)
    assert any(w != 0 for w in model.weights)
    assert len(model.section_weights) == len(FEATURES)
    assert any(w != 0 for w in model.section_weights)


def test_pairwise_fit_learns_the_feature_that_puts_the_gold_row_first() -> None:
    rng = np.random.default_rng(3)
    cases = []
    for number in range(30):
        rows = rng.normal(size=(8, len(FEATURES)))
        gold = np.zeros(8, dtype=bool)
        gold[number % 8] = True
        rows[gold, 1] += 3.0  # the gold row stands out on one feature only
        documents = tuple(f"d{i}" for i in range(8))
        cases.append(case(number, rows, gold, documents, f"t{number % 3}"))
    weights = fit_ranking(cases, l2=1.0)
    assert int(np.argmax(weights)) == 1
    assert np.mean([reciprocal_rank(case, weights) for case in cases]) > 0.9


def test_tenant_held_out_fit_scores_each_tenant_with_weights_it_did_not_see() -> None:
    rng = np.random.default_rng(7)
    cases = []
    for number in range(45):
        rows = rng.normal(size=(8, len(FEATURES)))
        gold = np.zeros(8, dtype=bool)
        gold[number % 8] = True
        # Tenants "a" and "b" put the gold row first on feature 1; tenant "c" on feature 2.
        rows[gold, 1 if number % 3 else 2] += 5.0
        documents = tuple(f"d{i}" for i in range(8))
        cases.append(case(number, rows, gold, documents, "abc"[number % 3]))
    # Grouped by question, every fold still fits on tenant "c"'s questions; held out by
    # tenant, "c" is ranked by weights that never saw feature 2 matter.
    by_question = cross_validated_mrr(cases, l2=1.0, sections=False)
    by_tenant = tenant_held_out_mrr(cases, l2=1.0, sections=False)
    assert by_question > 0.9
    assert by_tenant < by_question - 0.1


def test_each_document_keeps_its_places_and_fills_them_by_section_score() -> None:
    documents = ["a", "b", "a", "c", "a"]
    order = sections_in_place(documents, [0.1, 5.0, 0.3, 0.0, 0.2])
    assert order == [2, 1, 4, 3, 0]
    assert [documents[i] for i in order] == documents


def test_section_fit_learns_what_tells_a_runbooks_sections_apart() -> None:
    rng = np.random.default_rng(5)
    cases = []
    for number in range(30):
        rows = rng.normal(size=(8, len(FEATURES)))
        documents = ("gold-runbook",) * 4 + tuple(f"other{i}" for i in range(4))
        gold = np.zeros(8, dtype=bool)
        gold[number % 4] = True
        rows[:4, 0] += 5.0  # the gold runbook stands out on feature 0, in every section
        rows[gold, 2] += 3.0  # the gold section stands out among its siblings on feature 2
        cases.append(case(number, rows, gold, documents, f"t{number % 3}"))
    section_weights = fit_sections(cases, l2=1.0)
    assert int(np.argmax(section_weights)) == 2
    # A first order that tells runbooks apart only: the section weights pick the section.
    weights = np.eye(len(FEATURES))[0]
    with_sections = np.mean([reciprocal_rank(c, weights, section_weights) for c in cases])
    assert with_sections > np.mean([reciprocal_rank(c, weights) for c in cases])
    assert with_sections > 0.9


def test_section_weights_reorder_a_runbooks_chunks_without_moving_other_runbooks() -> None:
    found = [
        chunk(1, "etcd/etcdNoLeader", "Meaning", vector=1, keyword=1),
        chunk(2, "etcd/etcdMembersDown", "Meaning", vector=2, keyword=2),
        chunk(3, "etcd/etcdNoLeader", "Mitigation", vector=3, keyword=3),
    ]
    vector_only = tuple(1.0 if name == "vector_rrf" else 0.0 for name in FEATURES)
    mitigation_first = tuple(1.0 if name == "kind_mitigation" else 0.0 for name in FEATURES)
    model = RankModel("test-model", vector_only, mitigation_first)
    ranked = fuse(found, ScopeHints(), "etcd leader", term_df={}, tenant_chunks=10, model=model)
    assert [e.chunk_id for e in ranked] == [3, 2, 1]
    assert [e.score for e in ranked] == sorted((e.score for e in ranked), reverse=True)


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


@pytest.mark.parametrize(
    "content",
    ["TODO", "* N/A", "NA", "Same as above.", "See [below](#too-many-shards)", "TBD: fill in", ""],
)
def test_placeholder_sections_are_recognised(content: str) -> None:
    assert is_placeholder(content)


@pytest.mark.parametrize(
    "content",
    [
        "Fix rules.",
        "None.",
        "Service degradation or unavailability.",
        "TODO: page the database owner, then restart the primary and watch replication",
        "```shell\n$ chef-client-enable\n```",
        "ノードを再起動します",
    ],
)
def test_terse_sections_that_say_something_are_not_placeholders(content: str) -> None:
    assert not is_placeholder(content)


def test_a_placeholder_section_goes_last_whatever_it_scores() -> None:
    document = "kube-state-metrics/KubeStateMetricsShardsMissing"
    found = [
        chunk(1, document, "Mitigation", vector=1, keyword=1, content="TODO"),
        chunk(2, document, "Diagnosis", vector=2, keyword=2, content="Check the shard logs."),
        chunk(3, "other/Runbook", "Meaning", vector=3, keyword=3, content="Something else."),
    ]
    ranked = fuse(found, ScopeHints(), "shards are missing", term_df={}, tenant_chunks=10)
    assert [e.chunk_id for e in ranked] == [2, 3, 1]
    assert "placeholder" in ranked[-1].hit_reasons
    assert [e.score for e in ranked] == sorted((e.score for e in ranked), reverse=True)


@pytest.mark.parametrize(
    ("headings", "kind"),
    [
        (("Meaning", "Disable this alert entirely"), "mitigation"),
        (("Diagnosis", "Slow disk"), "diagnosis"),
        (("Mitigation", "Purge volume"), "mitigation"),
        (("Meaning", "Check for slow queries"), "diagnosis"),
        (("Detecting corrupted data",), "diagnosis"),
        (("Scale up the ingesters",), "mitigation"),
        # GitLab's runbooks head their procedure "What to do" (round 10).
        (("What to do",), "mitigation"),
    ],
)
def test_a_sections_kind_is_its_deepest_headings_or_the_action_that_heading_names(
    headings: tuple[str, ...], kind: str
) -> None:
    section = chunk(1, "runbook", "", vector=1, keyword=1, headings=headings)
    assert section_intents(section) == {kind}


@pytest.mark.parametrize(
    "headings",
    [
        ("Failover", "Unplanned failover"),
        ("Failover", "Planned switchover"),
        ("Rebuilding the old primary",),
        ("Rollback",),
        # A generic doing-verb before the operation's noun (round 9, the Confluence PITR page).
        ("Run the restore",),
        ("Perform the failover",),
        ("Do the switchover",),
        ("Execute the rollback",),
        ("Failover", "Perform a manual failover"),
        ("Carry out the migration",),
        ("Starting the rollout",),
    ],
)
def test_a_section_headed_by_an_operation_is_a_procedure_to_a_what_to_do_question(
    headings: tuple[str, ...],
) -> None:
    section = chunk(1, "runbook", "", vector=1, keyword=1, headings=headings)
    assert section_intents(section, frozenset({"mitigation"})) == {"mitigation"}
    assert section_intents(section, frozenset({"impact"})) == frozenset()


def test_a_passage_without_any_heading_is_no_procedure_and_no_error() -> None:
    # MT-RAG passages and pages of bare text are stored with no heading path at all.
    bare = replace(chunk(1, "passage", "", vector=1, keyword=1), heading_path=())
    assert section_intents(bare, frozenset({"mitigation"})) == frozenset()


@pytest.mark.parametrize(
    "headings",
    [
        ("Known failure modes", "Database failover in progress"),
        ("Symptoms",),
        ("Escalation",),
        # A doing-verb alone names no operation, and "not" undoes one.
        ("Run the dashboards",),
        ("Start here",),
        ("Do not fail over during a backup",),
        ("Perform these checks first",),
    ],
)
def test_a_heading_that_only_mentions_an_operation_is_no_procedure(
    headings: tuple[str, ...],
) -> None:
    section = chunk(1, "runbook", "", vector=1, keyword=1, headings=headings)
    assert "mitigation" not in section_intents(section, frozenset({"mitigation"}))


@pytest.mark.parametrize(
    ("question", "intent"),
    [
        ("PodDisruptionBudgetAtLimit but the app looks healthy, why should i care?", "impact"),
        ("if i delete a replicaset right now, do its pods get cleaned up?", "impact"),
        ("what happens if we let the signer certificate expire?", "impact"),
        ("telemeter keeps failing, what do we lose?", "impact"),
        ("what p99 wal fsync latency counts as a healthy disk?", "meaning"),
        ("at what point does the alert go critical?", "meaning"),
        ("what threshold does KubeletTooManyPods use?", "meaning"),
    ],
)
def test_impact_and_threshold_phrasings_ask_for_impact_and_meaning(
    question: str, intent: str
) -> None:
    assert question_intents(question) == {intent}


@pytest.mark.parametrize(
    "question",
    [
        "nightly job failed, how do i figure out why",
        "how do i find out what the slow requests are stuck on?",
        "how do we work out whether the autoscaler is failing to add nodes?",
        "how can i tell if the kube-proxy pods are even running",
        "how do i debug the webhook timeouts",
        "how to determine which member is behind",
    ],
)
def test_asking_how_to_find_something_out_asks_for_diagnosis_not_a_fix(question: str) -> None:
    assert question_intents(question) == {"diagnosis"}


@pytest.mark.parametrize(
    ("question", "intents"),
    [
        ("ceph osd over 80% full, can the customer just delete data?", set()),
        ("customer blocked by the waf, false positive, what do i collect", set()),
        ("the api is down, do customers notice?", {"impact"}),
        ("is this customer-facing or internal only?", {"impact"}),
    ],
)
def test_a_customer_named_in_a_question_asks_for_impact_only_when_they_notice(
    question: str, intents: set[str]
) -> None:
    assert question_intents(question) == intents


@pytest.mark.parametrize(
    "question",
    [
        "rule evaluation failures, what's the impact on our dashboards?",
        "remote write is behind, whats the blast radius for our alerts?",
        "osd disk 90% busy, what's the risk for the storage clients?",
        "what's the damage if the signer certificate expires?",
    ],
)
def test_whats_the_impact_asks_for_impact_not_meaning(question: str) -> None:
    assert question_intents(question) == {"impact"}


def test_whats_wrong_asks_for_diagnosis_not_meaning() -> None:
    assert question_intents("the node went notready, what's wrong with it") == {"diagnosis"}


@pytest.mark.parametrize(
    "question",
    [
        "node has 108 pods on it, is there a limit",
        "ceph keeps filling up, is there a limit before it goes read-only?",
        "whats the max size allowed for the etcd database?",
        "how many clones of one rbd image are allowed before it alerts?",
        "what's the maximum number of members allowed in one etcd cluster?",
    ],
)
def test_asking_for_the_limit_asks_for_the_meaning_that_states_it(question: str) -> None:
    assert question_intents(question) == {"meaning"}


@pytest.mark.parametrize(
    "question",
    ["clock skew on a node and tls errors, what to do", "KubeJobFailed fired again, what now"],
)
def test_what_to_do_and_what_now_ask_what_to_do(question: str) -> None:
    assert question_intents(question) == {"mitigation"}


@pytest.mark.parametrize(
    "question",
    [
        "how do i increase the target limit",
        "is it ok to just raise the cpu limit when throttling alerts fire",
        "pvc running out of inodes, can i add more inodes?",
        "should we scale out the ingesters",
    ],
)
def test_raising_a_limit_or_adding_capacity_asks_what_to_do(question: str) -> None:
    assert "mitigation" in question_intents(question)


@pytest.mark.parametrize(
    "question",
    [
        "prometheus dropped targets because of the label limit, what do we do about it",
        "the signer ca is about to expire, how do we rotate it",
        "descheduler psi disabled alert, what does it want me to enable",
    ],
)
def test_about_and_what_does_it_want_ask_what_to_do_not_what_it_means(question: str) -> None:
    assert question_intents(question) == {"mitigation"}


def test_what_an_alert_is_about_still_asks_for_meaning() -> None:
    assert question_intents("what is this alert about") == {"meaning"}


def test_a_symptom_that_cannot_find_something_is_no_request_to_find_it() -> None:
    assert "diagnosis" not in question_intents("peers cant find one of the members")
    assert "diagnosis" in question_intents("how do i find the member that is behind")


def test_content_length_is_the_chunks_words_against_the_longest_candidate() -> None:
    found = [
        chunk(1, "a", "Mitigation", vector=1, keyword=None, content="Restart it."),
        chunk(2, "b", "Mitigation", vector=2, keyword=None, content=" ".join(["step"] * 40)),
    ]
    rows = candidate_features(found, ScopeHints(), "restart", term_df={}, tenant_chunks=10)
    column = FEATURES.index("content_length")
    assert rows[1][column] == 1.0
    assert 0.0 < rows[0][column] < 0.5


def test_the_first_order_never_reads_a_section_only_feature() -> None:
    rng = np.random.default_rng(11)
    column = FEATURES.index("content_length")
    cases = []
    for number in range(30):
        rows = rng.normal(size=(8, len(FEATURES)))
        gold = np.zeros(8, dtype=bool)
        gold[number % 8] = True
        rows[gold, column] += 5.0  # the gold row is the longest, and nothing else tells
        cases.append(case(number, rows, gold, tuple(f"d{i}" for i in range(8)), "t"))
    assert fit_ranking(cases, l2=1.0)[column] == 0.0
    assert fit_sections(cases, l2=1.0)[column] == 0.0  # no siblings: nothing to learn there
    same_runbook = [
        RankingCase(c.question_id, c.rows, c.gold, ("r",) * 8, "t", c.placeholder) for c in cases
    ]
    assert int(np.argmax(fit_sections(same_runbook, l2=1.0))) == column


def test_the_runbook_whose_opening_section_scores_best_opens_the_list() -> None:
    # Runbook "gw" holds places 0-1 by its item 0, but opens with item 1; "db" opens with item 2.
    order = [1, 0, 2, 3]
    documents = ["gw", "gw", "db", "db"]
    assert best_opening_first(order, documents, [9.0, 7.5, 8.2, 8.0]) == [2, 1, 0, 3]
    assert best_opening_first(order, documents, [9.0, 8.5, 8.2, 8.0]) == order


def test_the_first_runbook_opens_with_its_chosen_section_and_keeps_its_places() -> None:
    # "gw" holds places 0, 1 and 3; its item 3 (say, under Mitigation) moves to its first place.
    order = [0, 1, 2, 3]
    documents = ["gw", "gw", "db", "gw"]
    assert first_runbook_opens_with(order, documents, [False, False, True, True]) == [3, 0, 2, 1]
    assert first_runbook_opens_with(order, documents, [False, False, True, False]) == order


def test_only_a_top_level_mitigation_section_marks_a_runbook_in_the_usual_sections() -> None:
    usual = chunk(1, "gw", "", vector=1, keyword=1, headings=("Mitigation", "Fail over the PSP"))
    prose = chunk(2, "etcd", "", vector=2, keyword=2, headings=("Use cases", "Recover a cluster"))
    aside = chunk(3, "gw", "", vector=3, keyword=3, headings=("Known failure modes", "Failover"))
    assert under_section_word(usual, "mitigation")
    assert not under_section_word(prose, "mitigation")
    assert not under_section_word(aside, "mitigation")


def test_a_what_to_do_answer_does_not_open_on_an_aside_of_a_runbook_with_a_mitigation() -> None:
    """A what-to-do question whose best candidate is an aside of no kind ("Known failure modes ›
    Database failover") opens on a procedure: the aside's runbook opens with its Mitigation,
    and the runbook whose opening scores best by both orders opens the list."""
    headings = ("Known failure modes", "Database failover")
    aside = chunk(
        1, "gw", "", vector=1, keyword=1, matched=("databas", "failov"), headings=headings
    )
    psp = chunk(2, "gw", "", vector=3, keyword=None, headings=("Mitigation", "Fail over the PSP"))
    patroni = chunk(
        3, "db", "", vector=2, keyword=2, matched=("failov",), headings=("Failover", "Unplanned")
    )
    found = [aside, psp, patroni]
    question = "how do i fail over the database"
    df = {"databas": 3, "failov": 3}
    first = fuse(found, ScopeHints(), question, term_df=df, tenant_chunks=100, opening=False)
    assert first[0].chunk_id == 1  # the aside places its runbook first
    shown = fuse(found, ScopeHints(), question, term_df=df, tenant_chunks=100)
    assert shown[0].chunk_id != 1


def test_a_question_that_asks_for_the_impact_alone_opens_on_the_runbooks_impact() -> None:
    """ "what happens to the pods if we ignore it?": the Meaning and Mitigation restate the
    alert's subject and outscore the Impact on shared words; the runbook still opens on its
    Impact, keeping its place and its other sections after it."""
    alert = "NodeFileDescriptorLimit"
    words = ("file", "descriptor", "limit")
    meaning = chunk(1, alert, "Meaning", vector=1, keyword=1, matched=words)
    fix = chunk(2, alert, "Mitigation", vector=2, keyword=2, matched=words)
    impact = chunk(3, alert, "Impact", vector=4, keyword=None)
    other = chunk(4, "NodeHighLoad", "Meaning", vector=3, keyword=3, matched=("limit",))
    found = [meaning, fix, impact, other]
    df = {"file": 5, "descriptor": 2, "limit": 9, "pod": 20, "ignor": 1}
    impact_alone = "file descriptor limit alert, what happens to the pods if we ignore it?"
    shown = fuse(found, ScopeHints(), impact_alone, term_df=df, tenant_chunks=100)
    assert shown[0].chunk_id == 3
    assert {e.chunk_id for e in shown[:3]} == {1, 2, 3}
    # A question that asks for more than the Impact keeps the section weights' choice.
    both = "file descriptor limit alert, what happens if we ignore it and how do i fix it?"
    assert fuse(found, ScopeHints(), both, term_df=df, tenant_chunks=100)[0].chunk_id != 3


def test_a_question_that_asks_only_what_to_do_opens_on_the_runbooks_mitigation() -> None:
    """ "prometheus dropped targets because of the label limit, what do we do about it": the
    Meaning restates the alert's words and outscores the Mitigation; a runbook written in the
    usual sections opens on its Mitigation."""
    alert = "PrometheusLabelLimitHit"
    words = ("label", "limit", "target")
    meaning = replace(
        chunk(1, alert, "Meaning", vector=1, keyword=1, matched=words, content="words " * 80),
        cosine=0.8,
        bm25=12.0,
    )
    fix = replace(chunk(2, alert, "Mitigation", vector=9, keyword=None), cosine=0.3)
    other = chunk(3, "PrometheusTargetLimitHit", "Meaning", vector=2, keyword=2, matched=words)
    df = {"label": 5, "limit": 9, "target": 9, "drop": 4}
    question = "prometheus dropped targets because of the label limit, what do we do about it"
    shown = fuse([meaning, fix, other], ScopeHints(), question, term_df=df, tenant_chunks=100)
    assert shown[0].chunk_id == 2


def page(chunk_id: int, *headings: str, vector: int = 1) -> Evidence:
    """A chunk of the Confluence page "Restore payments-db to a point in time", its path
    opening with its ancestors' titles (``ancestors › title › headings``)."""
    title = "Restore payments-db to a point in time"
    found = chunk(chunk_id, "confluence/4325406", "", vector=vector, keyword=None)
    path = ("Operations Home", "Runbooks", "Postgres failover (payments-db)", title, *headings)
    return replace(found, title=title, heading_path=path)


def test_a_confluence_pages_sections_start_below_its_own_title() -> None:
    restore = page(1, "Mitigation", "Run the restore")
    assert section_headings(restore) == ("Mitigation", "Run the restore")
    # The first heading below the title, not the ancestor "Runbooks", is the top-level section.
    assert under_section_word(restore, "mitigation")
    assert section_headings(page(2)) == ()


def test_a_runbook_of_one_section_named_by_an_operation_is_a_procedure() -> None:
    # gitlab's "Disabling a Sidekiq queue": its steps sit under the title alone.
    whole = chunk(1, "docs/sidekiq/disabling-a-queue", "", vector=1, keyword=1)
    whole = replace(
        whole, title="Disabling a Sidekiq queue", heading_path=("Disabling a Sidekiq queue",)
    )
    asked = frozenset({"mitigation"})
    assert section_intents(whole, asked, sectioned_documents([whole])) == {"mitigation"}


def test_the_preamble_of_a_runbook_with_sections_is_no_procedure_its_title_names() -> None:
    """ "Restore payments-db to a point in time" names what its sections do ("Run the restore"),
    not that its opening paragraph is the procedure: an answer to "how do I get the data back"
    opens on a step, not on the preamble."""
    preamble, run = page(1), page(2, "Run the restore", vector=3)
    asked = frozenset({"mitigation"})
    sectioned = sectioned_documents([preamble, run])
    assert section_intents(preamble, asked, sectioned) == frozenset()
    assert section_intents(run, asked, sectioned) == {"mitigation"}
    # Without its sections among the candidates the chunk may be a runbook of one section.
    assert section_intents(preamble, asked) == {"mitigation"}
    question = "how do I get the data back"
    shown = fuse([preamble, run], ScopeHints(), question, term_df={}, tenant_chunks=100)
    assert "intent:mitigation" not in shown[[e.chunk_id for e in shown].index(1)].hit_reasons


def test_a_title_holds_the_other_spelling_of_its_phrasal_verb() -> None:
    found = [
        chunk(1, "kubernetes/KubeStatefulSetUpdateNotRolledOut", "Diagnosis", vector=1, keyword=1)
    ]
    rows = candidate_features(
        found, ScopeHints(), "update isnt rolling out", term_df={"rollout": 3}, tenant_chunks=100
    )
    assert rows[0][FEATURES.index("title_terms")] == 1.0


def test_without_opening_the_list_is_the_first_order_alone() -> None:
    found = [
        chunk(1, "runbook", "Meaning", vector=1, keyword=1, matched=("disk",)),
        chunk(2, "runbook", "Mitigation", vector=2, keyword=2),
    ]
    shown = fuse(found, ScopeHints(), "how do i fix the disk", term_df={}, tenant_chunks=10)
    first = fuse(
        found, ScopeHints(), "how do i fix the disk", term_df={}, tenant_chunks=10, opening=False
    )
    assert sorted(e.chunk_id for e in shown) == sorted(e.chunk_id for e in first)
    assert [e.score for e in first] == sorted((e.score for e in first), reverse=True)


def test_a_ranked_copy_differs_from_its_chunk_only_in_score_and_reasons() -> None:
    # Every field set away from its default, so a field ``ranked`` forgot would show.
    original = Evidence(
        chunk_id=7,
        document_id="payments/db-failover",
        version=3,
        title="DB failover",
        heading_path=("DB failover", "Mitigation"),
        content="Run `patronictl failover`.",
        url="https://runbooks.example/db",
        owner="@dba",
        updated="2026-01-02",
        service="payments",
        cosine=0.81,
        vector_rank=2,
        keyword_rank=5,
        score=0.0,
        hit_reasons=("old",),
        bm25=4.5,
        matched_terms=("failov",),
    )
    ranked = original.ranked(1.25, ("vector#2", "keyword#5"))
    assert ranked == replace(original, score=1.25, hit_reasons=("vector#2", "keyword#5"))
