"""An alert's name finds its runbook whatever the spelling, and only when one runbook fits."""

from __future__ import annotations

from rag.retrieval.runbook_names import RunbookNames, edit_distance, name_words, squash

NAMES = RunbookNames.build(
    [
        ("KubePodCrashLooping", "kubernetes/KubePodCrashLooping"),
        ("NorthboundStaleAlert", "cluster-network-operator/NorthboundStaleAlert"),
        ("MachineConfigDaemonRebootError", "mco/MachineConfigDaemonRebootError"),
        ("gitaly-error-rate", "docs/gitaly/gitaly-error-rate"),
        ("Gitaly error rate", "docs/gitaly/gitaly-error-rate"),
        ("PrometheusRemoteWriteBehind", "prometheus/PrometheusRemoteWriteBehind"),
        ("PrometheusRuleWriteBehind", "prometheus/PrometheusRuleWriteBehind"),
    ]
)


def test_camel_snake_and_kebab_spellings_are_one_name() -> None:
    assert squash("kube-pod-crash-looping") == squash("KubePodCrashLooping")
    for spelling in ("kube_pod_crash_looping", "kube-pod-crash-looping", "KUBEPODCRASHLOOPING"):
        assert NAMES.runbook_for(spelling) == "kubernetes/KubePodCrashLooping"
    assert NAMES.runbook_for("GitalyErrorRate") == "docs/gitaly/gitaly-error-rate"


def test_an_alert_suffix_on_either_side_is_ignored() -> None:
    assert NAMES.runbook_for("NorthboundStale") == "cluster-network-operator/NorthboundStaleAlert"
    assert NAMES.runbook_for("KubePodCrashLoopingAlert") == "kubernetes/KubePodCrashLooping"


def test_an_acronym_stands_for_the_runbook_words_it_abbreviates() -> None:
    assert name_words("MCDRebootError") == ("MCD", "Reboot", "Error")
    assert NAMES.runbook_for("MCDRebootError") == "mco/MachineConfigDaemonRebootError"


def test_an_acronym_two_runbooks_fit_names_neither() -> None:
    assert NAMES.runbook_for("PRWriteBehind") is None


def test_other_names_and_short_names_name_nothing() -> None:
    assert NAMES.runbook_for("CephOSDNearFull") is None
    assert NAMES.runbook_for("MachineConfigDaemonRebootErr") is None
    assert NAMES.runbook_for("db") is None


def test_a_long_alert_name_with_a_typo_names_the_one_runbook_it_misspells() -> None:
    # A letter left out, one doubled, two neighbours swapped: one edit each.
    for typo in ("KubePodCrashLoping", "KubePodCrashLoopingg", "KubePodCrahsLooping"):
        assert NAMES.near(typo) == "kubernetes/KubePodCrashLooping"
    # Two edits only in a name of 16 letters or more.
    assert NAMES.near("MachineConfigDaemonRebootErr") == "mco/MachineConfigDaemonRebootError"
    assert NAMES.near("NorthbondStaleAlrt") == "cluster-network-operator/NorthboundStaleAlert"
    assert NAMES.near("KubPodCrshLoping") is None  # three edits


def test_a_typo_names_nothing_when_two_runbooks_are_as_close_or_the_name_is_short() -> None:
    names = RunbookNames.build(
        [("KafkaBrokerDownEast", "kafka/east"), ("KafkaBrokerDownWest", "kafka/west")]
    )
    assert names.near("KafkaBrokerDownEst") is None  # one edit from each
    assert names.near("KafkaBrokerDownWst") == "kafka/west"
    assert RunbookNames.build([("Watchdog", "general/Watchdog")]).near("Watchdg") is None
    assert NAMES.near("KubePodCrashLooping") is None  # exact: ``runbook_for`` names it


def test_edit_distance_counts_a_swap_of_neighbours_as_one_and_stops_past_its_bound() -> None:
    assert edit_distance("looping", "lopoing", within=1) == 1
    assert edit_distance("looping", "loping", within=1) == 1
    assert edit_distance("looping", "lopng", within=1) is None
    assert edit_distance("looping", "lopng", within=2) == 2
    assert edit_distance("abc", "abc", within=0) == 0
