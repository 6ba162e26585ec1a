"""Hosts, addresses, pod hashes and urgency words never reach retrieval, the ranker or the gate
(issue 38 item 5): the question with them reads as the question without them, for every
question of the public eval sets and the demo golden set."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rag.retrieval.alerts import parse_alert
from rag.retrieval.query_noise import without_noise

EVALS = Path(__file__).resolve().parents[1] / "evals"
QUESTION_FILES = sorted((EVALS / "public").glob("*.jsonl")) + [EVALS / "golden.jsonl"]
# What an on-call adds around a question, and where: before it, after it, or after its first
# word (a place always comes with its preposition).
NOISE = (
    ("prefix", "URGENT:"),
    ("prefix", "HELP!!!"),
    ("suffix", "NOW!!!"),
    ("suffix", "asap pls"),
    ("suffix", "from 10.44.0.12:9100"),
    ("suffix", "at 3am"),
    ("suffix", "for 20 min"),
    ("after_first_word", "on ip-10-4-1-77.ec2.internal"),
    ("after_first_word", "on 192.168.10.21"),
    ("after_first_word", "on worker-7"),
    ("after_first_word", "instance=10.1.2.3:9100"),
)


def _questions() -> list[tuple[str, str]]:
    rows = []
    for path in QUESTION_FILES:
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                # Alert posts are searched by their parsed name and summary (rag.alerts).
                if parse_alert(row["question"]) is None:
                    rows.append((row["id"], " ".join(row["question"].split())))
    return rows


def _noisy(question: str, where: str, noise: str) -> str:
    if where == "prefix":
        return f"{noise} {question}"
    if where == "suffix":
        return f"{question} {noise}"
    first, _, rest = question.partition(" ")
    return f"{first} {noise} {rest}".strip()


def test_hosts_addresses_and_pod_hashes_leave_the_question_and_workload_names_stay() -> None:
    assert (
        without_noise(
            "KubePodCrashLooping payments-api-7d9f8c-xk2lp on ip-10-4-1-77.ec2.internal "
            "how bad is this"
        )
        == "KubePodCrashLooping payments-api how bad is this"
    )
    assert without_noise("etcdNoLeader firing on etcd-ip-10-0-1-5") == "etcdNoLeader firing on etcd"
    assert (
        without_noise("TargetDown job=node-exporter instance=10.1.2.3:9100 whats the impact")
        == "TargetDown job=node-exporter whats the impact"
    )
    assert without_noise("AuditLogError on master-0 10.0.0.5, is it safe to ignore") == (
        "AuditLogError, is it safe to ignore"
    )


def test_urgency_goes_but_a_question_about_speed_keeps_its_words() -> None:
    assert without_noise("node not ready alert on 10.20.3.4 fix it fast pls") == (
        "node not ready alert fix it"
    )
    assert without_noise("etcdNoLeader NOW!!! what do i do") == "etcdNoLeader what do i do"
    assert without_noise("quick, what do i check") == "what do i check"
    assert without_noise("how fast does the disk fill") == "how fast does the disk fill"
    assert without_noise("does an etcd disk need to be fast enough?") == (
        "does an etcd disk need to be fast enough?"
    )
    assert without_noise("what now") == "what now"
    assert without_noise("jwt auth rejecting requests for 10 min, who do i page") == (
        "jwt auth rejecting requests, who do i page"
    )


def test_versions_identifiers_api_groups_and_values_are_not_instances() -> None:
    for kept in (
        "sidecar wont talk to http/1.0 on v1.2.3",
        "HTTP-01 challenge returns 404",
        "metrics.k8s.io aggregated api unavailable",
        "resourcequota is at 92%, what do i do",
    ):
        assert without_noise(kept) == kept


def test_a_question_made_only_of_noise_is_kept_as_asked() -> None:
    assert without_noise("10.0.0.5 NOW") == "10.0.0.5 NOW"


@pytest.mark.parametrize(("where", "noise"), NOISE)
def test_every_eval_question_reads_the_same_with_noise_added(where: str, noise: str) -> None:
    changed = [
        (row_id, question)
        for row_id, question in _questions()
        if without_noise(_noisy(question, where, noise)) != without_noise(question)
    ]
    assert not changed, changed[:5]


def test_every_eval_question_reads_the_same_with_a_pod_hash_on_its_workload() -> None:
    checked = 0
    for row_id, question in _questions():
        words = question.split()
        for index, word in enumerate(words):
            # A workload's name ("checkout-api"), not a flag ("--force-new-cluster").
            workload = word[0].isalpha() and "-" in word and word.replace("-", "").isalpha()
            if workload and word.islower():
                hashed = [*words[:index], f"{word}-7d9f8c-xk2lp", *words[index + 1 :]]
                assert without_noise(" ".join(hashed)) == without_noise(question), row_id
                checked += 1
    assert checked >= 50
