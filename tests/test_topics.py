"""Topics computed when a question is stored: alert names, services, plain terms."""

from __future__ import annotations

from bot.core.answers.topics import question_topics


def test_alert_names_services_and_terms_become_topics() -> None:
    topics = question_topics(
        "KubePodCrashLooping on payments-gateway: certificates expired?",
        known_services=["payments-gateway", "checkout-api"],
    )
    assert topics == (
        "alert:KubePodCrashLooping",
        "service:payments-gateway",
        "term:certificate",
        "term:expired",
    )


def test_the_channel_service_is_a_topic_even_when_the_question_does_not_name_it() -> None:
    assert question_topics("queue is stuck", known_services=[], service="kafka") == (
        "service:kafka",
        "term:queue",
        "term:stuck",
    )


def test_product_names_are_not_alerts_and_common_words_are_not_terms() -> None:
    topics = question_topics("How do I check PostgreSQL, what is wrong?", known_services=[])
    assert topics == ("term:postgresql",)
