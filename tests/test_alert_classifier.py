"""Telling alert notifications from chatter, firing from resolved, and one alert from another;
and telling a follow-up question to the bot from the rest of a thread."""

from __future__ import annotations

import json
from typing import Any

import pytest

from bot.slack.alert_classifier import classify_alert
from bot.slack.listeners.followups import reads_as_question_to_bot
from tests.test_slack_alerts import ALERTMANAGER, DATADOG, PAGERDUTY

GRAFANA_LEGACY = {"text": "", "attachments": [{"title": "[Alerting] API latency p95", "text": ""}]}
GRAFANA_OK = {"attachments": [{"title": "[OK] API latency p95", "text": "back to normal"}]}
OPSGENIE = {
    "text": 'New alert: "Disk usage above 90% on db-2"',
    "attachments": [{"fields": [{"title": "Tags", "value": "host:db-2, env:prod"}]}],
}
OPSGENIE_CLOSED = {"text": 'Alert closed: "Disk usage above 90% on db-2"'}
PAGERDUTY_BLOCKS = {
    "text": "Triggered #48213: Replication lag above 300s on orders-db-replica-2",
    "blocks": [
        {
            "type": "section",
            "text": {"type": "mrkdwn", "text": ":red_circle: *Triggered* <https://x|#48213 Lag>"},
        }
    ],
}


@pytest.mark.parametrize(
    ("message", "name"),
    [
        (ALERTMANAGER, "KafkaConsumerLagHigh"),
        (PAGERDUTY, "Payments gateway returning 502s"),
        (PAGERDUTY_BLOCKS, "Replication lag above 300s on orders-db-replica-2"),
        (DATADOG, "High latency on checkout"),
        (GRAFANA_LEGACY, "API latency p95"),
        (OPSGENIE, "Disk usage above 90% on db-2"),
    ],
)
def test_firing_notifications_of_each_tool_are_alerts_with_their_name(
    message: dict[str, Any], name: str
) -> None:
    alert = classify_alert(message)
    assert alert is not None and (alert.state, alert.name) == ("firing", name)


@pytest.mark.parametrize(
    "message",
    [
        json.loads(json.dumps(ALERTMANAGER).replace("[FIRING:1]", "[RESOLVED]")),
        GRAFANA_OK,
        OPSGENIE_CLOSED,
        {"text": "Recovered: [P2] High latency on checkout"},
    ],
)
def test_resolved_notifications_are_recognised_as_resolved(message: dict[str, Any]) -> None:
    alert = classify_alert(message)
    assert alert is not None and alert.state == "resolved"


@pytest.mark.parametrize(
    "text",
    [
        "lunch anyone?",
        "ok let's do it",
        "the alert triggered again, looking",
        "closed the ticket",
        "Acknowledged #48213: Replication lag above 300s",  # neither new nor over: unsure
        "[No Data] API latency p95",
    ],
)
def test_chatter_and_unclear_states_are_not_firing_alerts(text: str) -> None:
    assert classify_alert({"text": text}) is None


def test_fingerprint_is_the_name_and_key_labels_not_pods_or_counts() -> None:
    base = classify_alert(ALERTMANAGER)
    again = json.loads(
        json.dumps(ALERTMANAGER)
        .replace("[FIRING:1]", "[FIRING:3]")
        .replace("`warning`", "`critical`")
        .replace("fulfilment-service`", "fulfilment-service-2`")
    )
    elsewhere = json.loads(json.dumps(ALERTMANAGER).replace("`kafka`", "`kafka-eu`"))
    repeat, other = classify_alert(again), classify_alert(elsewhere)
    assert base is not None and repeat is not None and other is not None
    assert ("service", "kafka") in base.labels
    assert repeat.fingerprint == base.fingerprint
    assert other.fingerprint != base.fingerprint


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("what about the replica, how do I check it?", True),
        ("how do I reinitialise the replica", True),
        ("thanks, and where is the dashboard?", True),
        ("<@UBOT> and the replica?", True),
        ("thanks!", False),
        ("thank you :pray:", False),
        ("ok", False),
        (":+1:", False),
        ("👍", False),
        ("<@U_OTHER> can you take this?", False),
        ("heads-up: starting the maintenance now", False),
    ],
)
def test_only_questions_to_the_bot_read_as_follow_ups(text: str, expected: bool) -> None:
    assert reads_as_question_to_bot(text, "UBOT") is expected
