"""Action and block ids of the App Home and its modal. A control's id says what it changes;
the thing it changes (a channel, a source, an admin) rides in its block id or value, and is
checked against the tenant on the server."""

from __future__ import annotations

import json
from dataclasses import dataclass

PREFIX = "home."
CHANNEL_SWITCHES = "home.channel.switches"
CHANNEL_SERVICE = "home.channel.service"
OWNER_USER = "home.owner.user"
OWNER_CHANNEL = "home.owner.channel"
OWNER_GROUP = "home.owner.group"
OWNER_CLEAR = "home.owner.clear"
ADMIN_ADD_USERS = "home.admin.add_users"
ADMIN_ADD_GROUP = "home.admin.add_group"
ADMIN_REMOVE = "home.admin.remove"
SOURCE_SYNC = "home.source.sync"
SOURCE_REMOVE = "home.source.remove"
SOURCE_ADD_GIT = "home.source.add_git"
SOURCE_ADD_CONFLUENCE = "home.source.add_confluence"
GAP_DRAFT = "home.gap.draft"
REFRESH = "home.refresh"
ADD_SOURCE_CALLBACK = "home.add_source"
CHANNEL_BLOCK = "ch:"  # + channel id
ANY_SERVICE = "*"


@dataclass(frozen=True)
class ViewOrigin:
    """What a published view was drawn for (its ``private_metadata``): an action from a view
    drawn for another tenant or workspace is refused."""

    tenant: str
    team_id: str

    def encode(self) -> str:
        return json.dumps({"t": self.tenant, "w": self.team_id}, separators=(",", ":"))

    @classmethod
    def decode(cls, raw: object) -> ViewOrigin | None:
        try:
            data = json.loads(raw) if isinstance(raw, str) else None
        except ValueError:
            return None
        if not isinstance(data, dict):
            return None
        tenant, team = data.get("t"), data.get("w")
        if isinstance(tenant, str) and isinstance(team, str):
            return cls(tenant, team)
        return None
