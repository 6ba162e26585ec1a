"""Which workspace a verified Slack payload comes from, and which tenant that workspace is.

Read from the payload itself, never from ``context.team_id``: for org-wide installs that is None
although the request happened in one specific workspace. Never from user-typed text.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rag import Store, find_tenant


@dataclass(frozen=True)
class Origin:
    """Where a request was made: the workspace (and its org, if any) and the channel."""

    team_id: str | None
    enterprise_id: str | None
    channel_id: str | None


def origin_of(body: dict[str, Any]) -> Origin:
    event = body.get("event") or {}
    team = body.get("team") or {}
    enterprise = body.get("enterprise") or {}
    user = body.get("user") or {}
    channel = body.get("channel") or {}
    team_id = (
        body.get("team_id")
        or event.get("team")
        or (team.get("id") if isinstance(team, dict) else None)
        or (user.get("team_id") if isinstance(user, dict) else None)
    )
    enterprise_id = body.get("enterprise_id") or (
        enterprise.get("id") if isinstance(enterprise, dict) else None
    )
    channel_id = (
        event.get("channel")
        or body.get("channel_id")
        or (channel.get("id") if isinstance(channel, dict) else None)
    )
    return Origin(
        team_id=_str_or_none(team_id),
        enterprise_id=_str_or_none(enterprise_id),
        channel_id=_str_or_none(channel_id),
    )


async def tenant_of(store: Store, origin: Origin) -> str | None:
    if origin.team_id is None and origin.enterprise_id is None:
        return None
    return await find_tenant(store, team_id=origin.team_id, enterprise_id=origin.enterprise_id)


def _str_or_none(value: object) -> str | None:
    return value if isinstance(value, str) and value else None
