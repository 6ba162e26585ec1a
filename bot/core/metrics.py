"""The Slack app's own Prometheus counters (no tenant or user labels: unbounded and identifying)."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, generate_latest

from rag import RagMetrics


class BotMetrics:
    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry or CollectorRegistry()
        self.events_received = Counter(
            "runbook_slack_events_received",
            "Verified deliveries from Slack, by kind (event type, command, interaction).",
            ["kind"],
            registry=self.registry,
        )
        self.signature_rejections = Counter(
            "runbook_slack_signature_rejections",
            "Requests refused with 401: bad or stale (over 5 minutes) Slack signature.",
            registry=self.registry,
        )
        self.duplicates_dropped = Counter(
            "runbook_slack_duplicates_dropped",
            "Events API deliveries dropped because their event_id was already seen.",
            registry=self.registry,
        )
        self.answers_posted = Counter(
            "runbook_slack_answers_posted",
            "Answer cards delivered to Slack, by entry point and outcome.",
            ["entry", "status"],
            registry=self.registry,
        )
        self.post_failures = Counter(
            "runbook_slack_post_failures",
            "Slack deliveries that failed after retries, by method and Slack error.",
            ["method", "error"],
            registry=self.registry,
        )
        self.listener_errors = Counter(
            "runbook_slack_listener_errors",
            "Unexpected failures inside listeners (each one shows the user an error card).",
            registry=self.registry,
        )


def render_metrics(rag: RagMetrics, bot: BotMetrics) -> bytes:
    """One Prometheus text page: the core's metrics, then the Slack app's."""
    return rag.render() + generate_latest(bot.registry)
