"""Is a Slack post an alert notification: the core's classifier (``bot.core.alerts.classifier``)
over the words ``bot.slack.alerts`` reads in its text, attachments and blocks."""

from __future__ import annotations

from typing import Any

from bot.core.alerts.classifier import AlertPost, classify_alert_text
from bot.slack.alerts import read_message

__all__ = ["AlertPost", "classify_alert"]


def classify_alert(message: dict[str, Any]) -> AlertPost | None:
    """The alert a post announces, or None when it is not (clearly) an alert notification."""
    return classify_alert_text(read_message(message))
