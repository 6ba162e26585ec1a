"""The Teams surface's Prometheus counters, on the bot's registry (no tenant or user labels)."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter


class TeamsMetrics:
    def __init__(self, registry: CollectorRegistry) -> None:
        self.activities_received = Counter(
            "runbook_teams_activities_received",
            "Authorised activities from the Bot Connector, by kind (message, invoke name).",
            ["kind"],
            registry=registry,
        )
        self.auth_rejections = Counter(
            "runbook_teams_auth_rejections",
            "Requests to /api/messages refused with 401 (missing, malformed or invalid token).",
            registry=registry,
        )
        self.duplicates_dropped = Counter(
            "runbook_teams_duplicates_dropped",
            "Activities dropped because their (conversation, activity id) was already seen.",
            registry=registry,
        )
        self.answers_posted = Counter(
            "runbook_teams_answers_posted",
            "Answer cards delivered to Teams, by entry point and outcome.",
            ["entry", "status"],
            registry=registry,
        )
        self.connector_retries = Counter(
            "runbook_teams_connector_retries",
            "Bot Connector calls retried, by HTTP status (or 'connect' for a refused connection).",
            ["status"],
            registry=registry,
        )
        self.connector_failures = Counter(
            "runbook_teams_connector_failures",
            "Bot Connector calls that failed for good, by operation and status.",
            ["operation", "status"],
            registry=registry,
        )
        self.graph_notifications = Counter(
            "runbook_teams_graph_notifications",
            "Microsoft Graph change notifications, by outcome (queued, duplicate, ignored: "
            "unverified, reply, other).",
            ["outcome"],
            registry=registry,
        )
