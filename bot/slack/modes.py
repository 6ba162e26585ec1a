"""How the app talks to Slack, decided from settings: HTTP, Socket Mode, or not configured."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from rag import Settings

_UNCONFIGURED = (
    "Slack is not configured: set SLACK_SIGNING_SECRET and SLACK_BOT_TOKEN (or SLACK_CLIENT_ID "
    "and SLACK_CLIENT_SECRET) for HTTP mode, or SLACK_APP_TOKEN and SLACK_BOT_TOKEN for "
    "Socket Mode"
)
_TOKEN = "SLACK_BOT_TOKEN (or SLACK_CLIENT_ID and SLACK_CLIENT_SECRET)"


@dataclass(frozen=True)
class SlackMode:
    """``kind`` is None when Slack is not (fully) configured; ``missing`` names what to set."""

    kind: Literal["http", "socket"] | None
    missing: tuple[str, ...] = ()
    partly_configured: bool = False

    def explain(self) -> str:
        if self.kind is not None:
            return f"Slack {self.kind} mode is configured"
        if not self.partly_configured:
            return _UNCONFIGURED
        return f"Slack is not fully configured: missing {' and '.join(self.missing)}"


def slack_mode(settings: Settings) -> SlackMode:
    bot_token = settings.slack_bot_token is not None
    client_id = settings.slack_client_id is not None
    client_secret = settings.slack_client_secret is not None
    signing_secret = settings.slack_signing_secret is not None
    if settings.slack_app_token is not None:
        # Socket Mode needs no public URL, hence no OAuth redirect: one bot token it is.
        if bot_token:
            return SlackMode("socket")
        return SlackMode(None, ("SLACK_BOT_TOKEN",), partly_configured=True)
    missing = []
    if not signing_secret:
        missing.append("SLACK_SIGNING_SECRET")
    if not bot_token:
        if client_id and not client_secret:
            missing.append("SLACK_CLIENT_SECRET")
        elif client_secret and not client_id:
            missing.append("SLACK_CLIENT_ID")
        elif not client_id:
            missing.append(_TOKEN)
    oauth = not bot_token and client_id and client_secret
    if oauth and settings.encryption_keys is None:
        # OAuth stores workspace tokens in Postgres, and only ever encrypted.
        missing.append("RUNBOOK_ENCRYPTION_KEYS")
    if not missing:
        return SlackMode("http")
    partly = bot_token or client_id or client_secret or signing_secret
    return SlackMode(None, tuple(missing), partly_configured=partly)
