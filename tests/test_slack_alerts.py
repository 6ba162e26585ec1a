"""Reading alert posts as monitoring tools shape them: text, attachments and blocks."""

from __future__ import annotations

from typing import Any

from bot.slack.alerts import fit_question, read_message

ALERTMANAGER: dict[str, Any] = {
    "text": "",
    "attachments": [
        {
            "color": "danger",
            "title": "[FIRING:1] KafkaConsumerLagHigh (fulfilment-service order-events)",
            "title_link": "https://alertmanager.acme.example/#/alerts",
            "text": (
                "*Alert:* Consumer group lag is growing - `warning`\n"
                "*Details:*\n • *alertname:* `KafkaConsumerLagHigh`\n"
                " • *service:* `kafka`\n • *consumergroup:* `fulfilment-service`"
            ),
            "fallback": "[FIRING:1] KafkaConsumerLagHigh",
        }
    ],
}
PAGERDUTY: dict[str, Any] = {
    "text": "",
    "attachments": [
        {
            "fallback": "Triggered #4821: Payments gateway 5xx ratio above 2%",
            "title": "#4821 Payments gateway returning 502s",
            "title_link": "https://acme.pagerduty.example/incidents/Q1",
            "text": "Alert PaymentsGateway5xxHigh: the gateway is returning 502s",
            "fields": [
                {"title": "Status", "value": "Triggered", "short": True},
                {"title": "Service", "value": "payments-gateway", "short": True},
            ],
        }
    ],
}
DATADOG: dict[str, Any] = {
    "text": "<https://app.datadoghq.example/monitors/1|[Triggered] [P2] High latency on checkout>",
    "blocks": [
        {
            "type": "section",
            "text": {"type": "mrkdwn", "text": "p95 latency above 800ms <!here>"},
            "fields": [{"type": "mrkdwn", "text": "*Tags:* env:prod, service:checkout-api"}],
        },
        {"type": "actions", "elements": [{"type": "button", "text": {"text": "Mute"}}]},
        {
            "type": "rich_text",
            "elements": [
                {
                    "type": "rich_text_section",
                    "elements": [{"type": "text", "text": "Runbook: see checkout latency"}],
                }
            ],
        },
    ],
}


def test_alertmanager_attachment_gives_alert_name_and_service_label() -> None:
    alert = read_message(ALERTMANAGER)
    assert "[FIRING:1] KafkaConsumerLagHigh" in alert.question
    assert "Consumer group lag is growing" in alert.question
    assert alert.hints[0] == "kafka"
    assert "KafkaConsumerLagHigh" in alert.hints


def test_pagerduty_service_field_is_the_first_hint_and_fields_are_read() -> None:
    alert = read_message(PAGERDUTY)
    assert alert.hints[0] == "payments-gateway"
    assert "Service: payments-gateway" in alert.question
    assert "returning 502s" in alert.question
    # The fallback repeats the attachment; it is read only when nothing else was.
    assert "Triggered #4821" not in alert.question


def test_datadog_blocks_and_tags_are_read_and_buttons_and_mentions_are_not() -> None:
    alert = read_message(DATADOG)
    assert "[Triggered] [P2] High latency on checkout" in alert.question
    assert "p95 latency above 800ms" in alert.question
    assert "Runbook: see checkout latency" in alert.question
    assert "Mute" not in alert.question and "<!here>" not in alert.question
    assert alert.hints == ("checkout-api",)


def test_long_alert_is_cut_at_a_word_boundary() -> None:
    question = fit_question("word " * 1000, 2000)
    assert len(question) <= 2000 and question.endswith("word")


def test_fitted_alert_keeps_its_lines_for_the_alert_parser() -> None:
    question = fit_question(
        "[FIRING:1] KubePodCrashLooping\n\n  *Summary:*   Pod is crash looping.\n", 2000
    )
    assert question == "[FIRING:1] KubePodCrashLooping\n*Summary:* Pod is crash looping."


def test_long_alert_is_cut_at_a_line_boundary_too() -> None:
    question = fit_question("[FIRING:1] KubePodCrashLooping\n" + "x" * 3000, 2000)
    assert question == "[FIRING:1] KubePodCrashLooping"
