"""Whether the Graph path for Teams alert posts can run (``TEAMS_GRAPH_ALERTS=true``), and the
notification URL Graph is given.

It needs a public https address (``RUNBOOK_PUBLIC_URL``, which Graph validates and posts to),
``RUNBOOK_ENCRYPTION_KEYS`` (each subscription's ``clientState`` secret is stored sealed) and
Teams itself. Local mode sends Graph calls without a token, so there every Graph URL, and the
public URL, must be loopback: an unsigned call never leaves the machine.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from bot.teams.config import TeamsMode, is_loopback
from rag import Settings

GRAPH_HOOK_PATH = "/hooks/graph/teams"


def graph_alerts_problem(settings: Settings, teams: TeamsMode) -> str | None:
    """Why ``TEAMS_GRAPH_ALERTS=true`` cannot run with these settings; None when it can (or
    is off)."""
    if not settings.teams_graph_alerts:
        return None
    if teams.kind is None:
        return "TEAMS_GRAPH_ALERTS=true needs Teams configured: " + teams.explain()
    if settings.encryption_keys is None or not settings.encryption_keys.get_secret_value():
        return (
            "TEAMS_GRAPH_ALERTS=true stores a secret per Graph subscription, encrypted at rest: "
            "set RUNBOOK_ENCRYPTION_KEYS (`runbook secrets generate-key`)"
        )
    if not settings.public_url:
        return (
            "TEAMS_GRAPH_ALERTS=true needs RUNBOOK_PUBLIC_URL, the https address Microsoft Graph "
            f"posts notifications to ({GRAPH_HOOK_PATH} on RUNBOOK_PORT)"
        )
    public = urlsplit(settings.public_url)
    if teams.kind == "local":
        urls = (settings.public_url, settings.teams_graph_url, settings.teams_login_url)
        if not all(is_loopback(urlsplit(url).hostname or "") for url in urls):
            return (
                "Teams local mode sends Graph calls without a token: RUNBOOK_PUBLIC_URL, "
                "TEAMS_GRAPH_URL and TEAMS_LOGIN_URL must then all be loopback addresses"
            )
    elif public.scheme != "https":
        return f"Microsoft Graph only posts to https: RUNBOOK_PUBLIC_URL is {settings.public_url!r}"
    return None


def notification_url(settings: Settings) -> str:
    return f"{(settings.public_url or '').rstrip('/')}{GRAPH_HOOK_PATH}"
