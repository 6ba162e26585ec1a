"""Alert posts: the name and summary are found; status tags and routing labels are not evidence."""

from __future__ import annotations

from typing import Any

import pytest

from bot.slack.alerts import fit_question, read_message
from rag.retrieval.alerts import parse_alert
from tests.test_alert_classifier import GRAFANA_LEGACY, OPSGENIE, PAGERDUTY_BLOCKS
from tests.test_slack_alerts import ALERTMANAGER, DATADOG, PAGERDUTY

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


def test_description_under_an_annotations_heading_is_read_whole() -> None:
    alert = parse_alert(
        "[FIRING:2] KubeDeploymentReplicasMismatch\n"
        "Labels:\n"
        " - alertname = KubeDeploymentReplicasMismatch\n"
        " - severity = warning\n"
        "Annotations:\n"
        " - description = Deployment shop/checkout has not matched the expected number of "
        "replicas for longer than 15 minutes.\n"
    )

    assert alert is not None and alert.summary is not None
    assert "has not matched the expected number of replicas" in alert.summary
    assert "labels" not in alert.labels and "annotations" not in alert.labels


def test_summary_and_description_are_both_searched() -> None:
    alert = parse_alert(
        "[FIRING:1] PatroniGCSSnapshotFailed\n"
        "summary: GCS snapshot failed\n"
        "description: The last WAL-G backup to object storage did not complete."
    )

    assert alert is not None
    text = alert.search_text()
    assert "GCS snapshot failed" in text and "WAL-G backup to object storage" in text


def test_email_subject_line_is_a_notification_header() -> None:
    alert = parse_alert(
        "From: alertmanager@example.com\n"
        "Subject: [FIRING:2] etcdInsufficientMembers for job etcd\n\n"
        "summary: etcd cluster has insufficient members"
    )

    assert alert is not None and alert.status == "FIRING"
    assert alert.name == "etcdInsufficientMembers"
    assert alert.summary is not None
    assert alert.summary.endswith("etcd cluster has insufficient members")


def test_datadog_triggered_on_host_header_is_recognised() -> None:
    alert = parse_alert("🔴 *[Triggered on {host:ip-10-0-3-14}] Disk almost full on ip-10-0-3-14*")

    assert alert is not None and alert.status == "TRIGGERED" and alert.name is None
    assert alert.search_text().startswith("Disk almost full on")


def test_alert_key_holds_the_name_only_when_it_is_one_identifier() -> None:
    named = parse_alert("alert: NodeFilesystemAlmostOutOfSpace\nseverity: warning")
    prose = parse_alert("[FIRING:1] web\n*Alert:* StatefulSet has not matched replicas")

    assert named is not None and named.name == "NodeFilesystemAlmostOutOfSpace"
    assert prose is not None and prose.name is None


def test_kebab_case_name_counts_only_when_it_opens_the_title() -> None:
    opening = parse_alert("[FIRING:1] kube-pod-crash-looping (namespace=payments)")
    later = parse_alert("[FIRING:1] 5xx rate above 5% on ingress-nginx-controller")

    assert opening is not None and opening.name == "kube-pod-crash-looping"
    assert "kube pod crash looping" in opening.search_text()
    assert later is not None and later.name is None


def test_instance_names_values_and_tickets_are_not_searched() -> None:
    alert = parse_alert(
        ":rotating_light: *Triggered* #PD-23411 Gitaly is down on file-23-stor-gprd.c.internal\n"
        "description: Pod payments/payments-api-7d9f8c-xk2lp at 10.0.0.12:2379 used 96.4% of "
        "pg_xid_wraparound, notify @sre-oncall [P2]"
    )

    assert alert is not None
    words = alert.search_text().split()
    assert "Gitaly" in words and "pg_xid_wraparound," in words
    for noise in ("#PD-23411", "file-23-stor-gprd.c.internal", "10.0.0.12:2379", "96.4%"):
        assert noise not in words
    assert "@sre-oncall" not in words and "[P2]" not in words
    assert not any("payments-api" in word for word in words)


def test_paths_are_where_an_alert_fired_but_io_is_a_word() -> None:
    alert = parse_alert(
        "[FIRING:1] NodeDiskIOSaturation\n"
        "description: Disk I/O on /dev/sda1 is saturated; Deployment shop/checkout is slow."
    )

    assert alert is not None
    words = alert.search_text().split()
    assert "I/O" in words
    assert "/dev/sda1" not in words and "shop/checkout" not in words


def test_component_label_names_what_a_generic_alert_is_about() -> None:
    alert = parse_alert(
        "[FIRING:1] component_saturation_slo_out_of_bounds (component=pgbouncer_async_pool "
        "env=gprd severity=s3)"
    )

    assert alert is not None and "pgbouncer_async_pool" in alert.search_text()
    assert "gprd" not in alert.search_text()


def test_runbook_url_annotation_is_kept() -> None:
    alert = parse_alert(
        "alertname = KubeDeploymentReplicasMismatch\n"
        "runbook_url = https://runbooks.example.dev/runbooks/kubernetes/kubedeploymentreplicasmismatch"
    )

    assert alert is not None
    assert alert.runbook_url == (
        "https://runbooks.example.dev/runbooks/kubernetes/kubedeploymentreplicasmismatch"
    )


def test_cloudwatch_alarm_and_zabbix_problem_shapes_are_recognised() -> None:
    alarm = parse_alert('ALARM: "KubeNodeNotReady" in US East (N. Virginia)')
    problem = parse_alert("Problem: Disk space is low on web-01.prod\nSeverity: High")

    assert alarm is not None and alarm.source == "cloudwatch"
    assert alarm.name == "KubeNodeNotReady"
    assert problem is not None and problem.source == "zabbix" and problem.name is None
    assert problem.search_text() == "Disk space is low on"


@pytest.mark.parametrize(
    ("message", "words"),
    [
        (
            ALERTMANAGER,
            "KafkaConsumerLagHigh kafka consumer lag high Consumer group lag is growing",
        ),
        (DATADOG, "High latency on checkout"),
        (PAGERDUTY, "Payments gateway returning 502s"),
        (PAGERDUTY_BLOCKS, "Replication lag above 300s on"),
        (GRAFANA_LEGACY, "API latency p95"),
        (OPSGENIE, "Disk usage above on"),
    ],
)
def test_every_post_the_slack_classifier_calls_an_alert_is_parsed_as_one(
    message: dict[str, Any], words: str
) -> None:
    alert = parse_alert(fit_question(read_message(message).question, 2000))

    assert alert is not None and alert.status in ("FIRING", "TRIGGERED", "ALERTING")
    assert alert.search_text().startswith(words)
    assert "warning" not in alert.search_text() and "#4821" not in alert.search_text()


def test_the_sending_tool_is_not_the_alert_name() -> None:
    alert = parse_alert(
        "[PagerDuty ALERT] You have 1 TRIGGERED Incident (3b1c)\n"
        "Status: Triggered\n"
        "Payments gateway returning errors above threshold"
    )

    assert alert is not None and alert.status == "TRIGGERED" and alert.name is None
    words = alert.search_text().lower().split()
    assert "payments" in words and "pagerduty" not in words and "triggered" not in words
    words = alert.search_text().lower().split()
    assert "payments" in words and "pagerduty" not in words and "triggered" not in words


def test_without_a_summary_field_the_body_line_is_searched_with_the_title() -> None:
    alert = parse_alert(
        "**[Alerting] Checkout p99 latency**\n"
        "Threshold: 1.5\n"
        "Checkout requests are slower than 1.5s at p99 for 10 minutes"
    )

    assert alert is not None and alert.summary is not None
    assert alert.summary.startswith("Checkout p99 latency")
    assert alert.summary.endswith("Checkout requests are slower than 1.5s at p99 for 10 minutes")
