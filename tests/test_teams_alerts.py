"""Reading alert posts for "Ask runbooks": words and scope hints from the shapes monitoring
tools post to Teams (HTML bodies, Adaptive Cards, Office 365 connector cards)."""

from __future__ import annotations

import json

from microsoft_agents.activity import Activity

from bot.core.alerts.classifier import classify_alert_text
from bot.teams.alerts import html_to_text, read_activity, read_message_payload
from bot.teams.message_action import fit_question
from tests.teams_harness import WORKFLOWS, alertmanager_payload, channel_post
from tests.test_teams_incident_channel import (
    CONNECTOR,
    PROMTEAMS,
    message_card,
    prometheus_msteams_card,
    workflows_card,
)

AZURE_MONITOR = {
    "type": "AdaptiveCard",
    "body": [
        {"type": "TextBlock", "text": "Fired: Sev2 Azure Monitor alert HighCpu on vm-checkout-01"},
        {
            "type": "FactSet",
            "facts": [
                {"title": "Alert rule", "value": "HighCpu"},
                {"title": "Severity", "value": "Sev2"},
                {"title": "Affected resource", "value": "vm-checkout-01"},
            ],
        },
    ],
    "actions": [{"type": "Action.OpenUrl", "title": "View in portal", "url": "https://portal"}],
}
PAGERDUTY = {  # an Office 365 connector card (MessageCard)
    "@type": "MessageCard",
    "summary": "Triggered #4711",
    "sections": [
        {
            "activityTitle": "Triggered: Payment gateway 5xx rate above 5%",
            "activitySubtitle": "Incident #4711",
            "facts": [
                {"name": "Service", "value": "payments-gateway"},
                {"name": "Urgency", "value": "high"},
            ],
        }
    ],
    "potentialAction": [{"@type": "OpenUri", "name": "View", "targets": [{"uri": "https://pd"}]}],
}
GRAFANA = {
    "title": "[FIRING:1] HighErrorRate checkout",
    "text": "**Firing**\n\nLabels:\n - alertname = HighErrorRate\n - service = checkout-api\n",
}


def payload(*cards: object, html: str = "") -> dict[str, object]:
    return {
        "id": "1700000000001",
        "body": {"contentType": "html", "content": html},
        "attachments": [
            {"contentType": "application/vnd.microsoft.card.adaptive", "content": card}
            for card in cards
        ],
    }


def test_alertmanager_html_body_and_json_string_card_give_words_and_alert_name() -> None:
    alert = read_message_payload(alertmanager_payload("1700000000002"))
    assert alert.question.splitlines()[0] == "[FIRING:1] KubePodCrashLooping (payments prod-eu-1)"
    assert "alertname: KubePodCrashLooping" in alert.question
    assert "Open" not in alert.question.split(), "buttons are not words of the alert"
    assert alert.hints == ("KubePodCrashLooping",)


def test_azure_monitor_card_names_its_alert_rule() -> None:
    alert = read_message_payload(payload(AZURE_MONITOR))
    assert "Alert rule: HighCpu" in alert.question
    assert alert.hints == ("HighCpu",)


def test_pagerduty_connector_card_gives_its_service_first() -> None:
    alert = read_message_payload(payload(json.dumps(PAGERDUTY)))
    assert "Triggered: Payment gateway 5xx rate above 5%" in alert.question
    assert alert.hints[0] == "payments-gateway"


def test_grafana_labels_become_service_then_alert_hints() -> None:
    alert = read_message_payload(payload(GRAFANA))
    assert alert.hints == ("checkout-api", "HighErrorRate")


def test_html_mentions_and_attachment_placeholders_are_dropped_entities_decoded() -> None:
    html = (
        '<p><at id="0">Everyone</at> pods &lt;crashing&gt; &amp; more</p>'
        '<attachment id="x"></attachment>'
    )
    assert html_to_text(html) == "pods <crashing> & more"


def test_a_long_alert_is_cut_at_a_word_boundary_and_tags_removed() -> None:
    question = fit_question("<at>x</at> " + "word " * 1000, 100)
    assert len(question) <= 100 and question.endswith("word") and "<at>" not in question


def test_a_fitted_alert_keeps_its_lines_for_the_alert_parser() -> None:
    question = fit_question(
        "[FIRING:1] KubePodCrashLooping\n\n  summary:  Pod is  crash looping.", 100
    )
    assert question == "[FIRING:1] KubePodCrashLooping\nsummary: Pod is crash looping."


def test_a_payload_that_is_not_an_object_asks_nothing() -> None:
    assert read_message_payload("nope").question == ""


def channel_activity(sender: dict[str, str], attachment: dict[str, object]) -> Activity:
    return Activity.model_validate(
        channel_post(
            service_url="http://127.0.0.1:9/amer/",
            aad_tenant="5c0ffee0-aaaa-4bbb-8ccc-0123456789ab",
            channel="19:oncall@thread.tacv2",
            sender=sender,
            attachments=(attachment,),
        )
    )


def test_a_workflows_card_reads_as_the_firing_alert_with_its_key_labels() -> None:
    alert = classify_alert_text(read_activity(channel_activity(WORKFLOWS, workflows_card())))
    assert alert is not None and (alert.state, alert.name) == ("firing", "KubePodCrashLooping")
    labels = dict(alert.labels)
    assert labels["namespace"] == "payments" and "pod" not in labels, "pods change per repeat"
    assert alert.scope_hints()[:2] == ("payments-api", "payments")


def test_prometheus_msteams_takes_its_state_from_the_title_and_its_name_from_the_facts() -> None:
    firing = read_activity(channel_activity(PROMTEAMS, prometheus_msteams_card()))
    resolved = read_activity(channel_activity(PROMTEAMS, prometheus_msteams_card("resolved")))
    assert (alert := classify_alert_text(firing)) is not None
    assert (alert.state, alert.name) == ("firing", "KubePodCrashLooping")
    assert (back := classify_alert_text(resolved)) is not None and back.state == "resolved"
    assert back.fingerprint == alert.fingerprint, "the same alert, so a repeat inside the window"


def test_a_message_card_and_its_resolved_twin_share_a_fingerprint() -> None:
    firing = classify_alert_text(read_activity(channel_activity(CONNECTOR, message_card())))
    resolved = read_activity(channel_activity(CONNECTOR, message_card("resolved")))
    back = classify_alert_text(resolved)
    assert firing is not None and back is not None
    assert (firing.state, back.state) == ("firing", "resolved")
    assert firing.fingerprint == back.fingerprint
