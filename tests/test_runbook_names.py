"""An alert's name finds its runbook whatever the spelling, and only when one runbook fits."""

from __future__ import annotations

from rag.retrieval.runbook_names import RunbookNames, name_words, squash

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
