"""The Slack tables whose values are sealed with ``RUNBOOK_ENCRYPTION_KEYS`` (OAuth installations
and bots), for ``runbook secrets reencrypt`` (``bot.core.secret_reseal``).

Also run once after upgrading from a release that stored tokens in plaintext.
"""

from __future__ import annotations

from bot.core.secret_reseal import SealedColumn

_WORKSPACE = "coalesce(nullif(enterprise_id, ''), '-') || '/' || coalesce(nullif(team_id, ''), '-')"

SLACK_SECRETS = (
    SealedColumn(
        "slack_installations",
        "installation",
        _WORKSPACE + " || ' user ' || coalesce(nullif(user_id, ''), '-')",
        "Slack installation of",
    ),
    SealedColumn("slack_bots", "bot", _WORKSPACE, "Slack bot token of"),
)
