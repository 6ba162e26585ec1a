"""Which installation a verified Slack request was authorized for, and which tenant that is.

The tenant is the one of the installation whose token Bolt uses for the request (the
authorize result; for events that is ``authorizations[0]``), never the outer ``team_id``: in a
Slack Connect channel that names the other organisation's workspace. For an org-wide install
the authorize result has no workspace, so the workspace comes from the payload, with the
installation's enterprise. Never from user-typed text.

Only members of the installing workspace (or org) are answered: a user of another organisation
asking in a shared channel is an *outsider* and gets a private "not connected" card.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from slack_bolt.context.async_context import AsyncBoltContext

from bot.slack.blocks import Card, render_not_connected, render_outsider
from rag import Store, find_tenant


@dataclass(frozen=True)
class Origin:
    """Where a request was made: the installing workspace (and its org, if any), the channel,
    and the team of the user who asked (another organisation's in Slack Connect)."""

    team_id: str | None
    enterprise_id: str | None
    channel_id: str | None
    asker_team_id: str | None = None
    org_wide: bool = False
    externally_shared: bool = False

    @property
    def outsider(self) -> bool:
        """True when the asker belongs to neither the installing workspace nor its org.

        An org-wide install has no workspace of its own, and in an externally shared channel the
        payload's workspace may be the other organisation's: there only an asker whose team is
        the installing enterprise itself counts as inside (fail closed).
        """
        asker = self.asker_team_id
        if asker is None:
            return False
        if self.org_wide and self.externally_shared:
            return asker != self.enterprise_id
        known = {self.team_id, self.enterprise_id} - {None}
        return bool(known) and asker not in known


def origin_of(body: dict[str, Any], context: AsyncBoltContext | None = None) -> Origin:
    installed_team, installed_enterprise = _installation(body, context)
    return Origin(
        team_id=installed_team or _payload_team(body),
        enterprise_id=installed_enterprise,
        channel_id=_channel(body),
        asker_team_id=_asker_team(body),
        org_wide=installed_team is None and installed_enterprise is not None,
        externally_shared=body.get("is_ext_shared_channel") in (True, "true"),
    )


def with_installation(body: dict[str, Any], context: AsyncBoltContext) -> dict[str, Any]:
    """The payload with the installation Bolt authorized it as pinned as ``authorizations``
    (events carry that already), so a queued job, which has no Bolt context, resolves the
    same tenant and the same outsider rule as the listener would have."""
    authorized = context.authorize_result
    if body.get("authorizations") or authorized is None:
        return body
    pinned = {"team_id": authorized.team_id, "enterprise_id": authorized.enterprise_id}
    return {**body, "authorizations": [pinned]}


async def tenant_of(store: Store, origin: Origin) -> str | None:
    """The installation's tenant; None when it is not connected or the asker is an outsider."""
    if origin.outsider or (origin.team_id is None and origin.enterprise_id is None):
        return None
    return await find_tenant(store, team_id=origin.team_id, enterprise_id=origin.enterprise_id)


def not_connected_card(origin: Origin) -> Card:
    """What a request without a tenant gets: connect instructions, or for an outsider a note
    that names none of the installing workspace's ids."""
    if origin.outsider:
        return render_outsider()
    return render_not_connected(team_id=origin.team_id, enterprise_id=origin.enterprise_id)


def _installation(
    body: dict[str, Any], context: AsyncBoltContext | None
) -> tuple[str | None, str | None]:
    """(team, enterprise) of the installation whose token answers this request: for events
    ``authorizations[0]`` (as Bolt chooses it), else the authorize result, else the payload."""
    authorizations = body.get("authorizations")
    if isinstance(authorizations, list) and authorizations and isinstance(authorizations[0], dict):
        first = authorizations[0]
        return _str_or_none(first.get("team_id")), _str_or_none(first.get("enterprise_id"))
    authorized = context.authorize_result if context is not None else None
    if authorized is not None:
        return _str_or_none(authorized.team_id), _str_or_none(authorized.enterprise_id)
    enterprise = body.get("enterprise")
    enterprise_id = body.get("enterprise_id") or (
        enterprise.get("id") if isinstance(enterprise, dict) else None
    )
    return _payload_team(body), _str_or_none(enterprise_id)


def _payload_team(body: dict[str, Any]) -> str | None:
    """The workspace the payload names (for org-wide installs, where the request happened)."""
    event = _dict(body.get("event"))
    team = body.get("team")
    return _str_or_none(
        body.get("team_id")
        or event.get("team")
        or (team.get("id") if isinstance(team, dict) else None)
        or _dict(body.get("user")).get("team_id")
    )


def _asker_team(body: dict[str, Any]) -> str | None:
    """The asking user's team: ``user_team`` on events in shared channels, the user's
    ``team_id`` on interactions, the command's ``team_id`` (the invoking user's workspace)."""
    event = _dict(body.get("event"))
    if event:
        return _str_or_none(event.get("user_team") or event.get("team"))
    user = body.get("user")
    if isinstance(user, dict):
        return _str_or_none(user.get("team_id"))
    return _str_or_none(body.get("team_id"))


def _channel(body: dict[str, Any]) -> str | None:
    return _str_or_none(
        _dict(body.get("event")).get("channel")
        or body.get("channel_id")
        or _dict(body.get("channel")).get("id")
    )


def _dict(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _str_or_none(value: object) -> str | None:
    return value if isinstance(value, str) and value else None
