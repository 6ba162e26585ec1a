"""Alert posts: the name and summary are found; status tags and routing labels are not evidence."""

from __future__ import annotations

from rag.alerts import parse_alert

ALERTMANAGER_SLACK = """\
[FIRING:1] KubeStatefulSetReplicasMismatch (kube-state-metrics prod)
*Alert:* StatefulSet has not matched the expected number of replicas - `warning`
*Details:*
  • *alertname:* `KubeStatefulSetReplicasMismatch`
  • *namespace:* `prod`
  • *severity:* `warning`
  • *statefulset:* `web`
"""


def test_alertmanager_slack_post_gives_name_labels_and_source() -> None:
    alert = parse_alert(ALERTMANAGER_SLACK)

    assert alert is not None
    assert alert.name == "KubeStatefulSetReplicasMismatch"
    assert alert.source == "alertmanager" and alert.status == "FIRING"
    assert alert.labels["severity"] == "warning" and alert.labels["namespace"] == "prod"


def test_one_line_firing_post_takes_the_name_after_the_status_tag() -> None:
    alert = parse_alert(
        "[FIRING:1] NodeFilesystemSpaceFillingUp (instance=10.0.0.3:9100 mountpoint=/var "
        "severity=warning)"
    )

    assert alert is not None and alert.name == "NodeFilesystemSpaceFillingUp"
    assert alert.labels["mountpoint"] == "/var"


def test_summary_label_is_searched_and_routing_labels_are_not() -> None:
    alert = parse_alert(
        'alertname="etcdNoLeader" severity="critical" namespace="openshift-etcd" '
        'summary="etcd cluster has no leader"'
    )

    assert alert is not None and alert.name == "etcdNoLeader"
    text = alert.search_text()
    assert "etcd cluster has no leader" in text and "no leader" in text
    for noise in ("FIRING", "critical", "severity", "namespace", "openshift-etcd"):
        assert noise not in text


def test_camel_case_name_is_also_searched_in_words() -> None:
    alert = parse_alert("[FIRING:2] KubeStatefulSetReplicasMismatch")

    assert alert is not None
    assert "stateful set replicas mismatch" in alert.search_text()


def test_grafana_and_pagerduty_shapes_are_recognised() -> None:
    grafana = parse_alert("[Alerting] HighErrorRate alert\nerror rate above 5% for 10 minutes")
    pagerduty = parse_alert("[#4821] Triggered: PatroniReplicationLagHigh on db-03")

    assert grafana is not None and grafana.name == "HighErrorRate" and grafana.source == "grafana"
    assert pagerduty is not None and pagerduty.name == "PatroniReplicationLagHigh"
    assert pagerduty.source == "pagerduty"


def test_an_ordinary_question_is_not_an_alert() -> None:
    assert parse_alert("etcd has no leader and the api server hangs, what now?") is None
    assert parse_alert("note: the pod restarts every 5 minutes, why?") is None
