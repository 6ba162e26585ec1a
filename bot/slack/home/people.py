"""What Slack says about the people and channels of a settings change: whether the actor is a
workspace admin or owner (``users.info``), which of the tenant's admin user groups they are in
(``usergroups.users.list``), and the channels the bot is a member of (``users.conversations``).

Answers are cached for a short while per workspace: the page opens and every click checks
authority, and neither should wait on a round of Web API calls each time.
"""

from __future__ import annotations

import logging

from cachetools import TTLCache
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.core.admin.admins import Actor

logger = logging.getLogger(__name__)

CACHE_S = 30
MAX_CHANNELS = 500


class SlackPeople:
    def __init__(self) -> None:
        self._admins: TTLCache[tuple[str, str], bool] = TTLCache(maxsize=5000, ttl=CACHE_S)
        self._groups: TTLCache[tuple[str, str], frozenset[str]] = TTLCache(
            maxsize=1000, ttl=CACHE_S
        )
        self._channels: TTLCache[str, list[tuple[str, str]]] = TTLCache(maxsize=1000, ttl=CACHE_S)
        self._usergroups: TTLCache[str, list[tuple[str, str]]] = TTLCache(maxsize=1000, ttl=CACHE_S)

    async def actor(
        self, client: AsyncWebClient, team_id: str, user_id: str, admin_groups: list[str]
    ) -> Actor:
        platform_admin = await self._is_workspace_admin(client, team_id, user_id)
        groups = set()
        for group in admin_groups:
            if user_id in await self._members(client, team_id, group):
                groups.add(group)
        return Actor("slack", user_id, platform_admin=platform_admin, groups=frozenset(groups))

    async def channels(self, client: AsyncWebClient, team_id: str) -> list[tuple[str, str]]:
        """(id, name) of the public and private channels the bot is in, by name."""
        if team_id in self._channels:
            return self._channels[team_id]
        found: list[tuple[str, str]] = []
        cursor: str | None = None
        while len(found) < MAX_CHANNELS:
            page = await client.users_conversations(
                types="public_channel,private_channel",
                exclude_archived=True,
                limit=200,
                cursor=cursor,
            )
            for channel in page.get("channels") or []:
                if isinstance(channel, dict) and isinstance(channel.get("id"), str):
                    found.append((channel["id"], str(channel.get("name") or channel["id"])))
            cursor = (page.get("response_metadata") or {}).get("next_cursor") or None
            if not cursor:
                break
        found.sort(key=lambda c: c[1])
        self._channels[team_id] = found
        return found

    async def usergroups(self, client: AsyncWebClient, team_id: str) -> list[tuple[str, str]]:
        """(id, handle) of the workspace's user groups; none without ``usergroups:read``."""
        if team_id in self._usergroups:
            return self._usergroups[team_id]
        try:
            listed = await client.usergroups_list()
        except SlackApiError as exc:
            logger.info("usergroups.list failed (%s)", exc.response.get("error"))
            return []
        groups = [
            (str(g["id"]), str(g.get("handle") or g.get("name") or g["id"]))
            for g in listed.get("usergroups") or []
            if isinstance(g, dict) and g.get("id")
        ]
        self._usergroups[team_id] = groups
        return groups

    def forget_channels(self, team_id: str) -> None:
        self._channels.pop(team_id, None)

    async def _is_workspace_admin(self, client: AsyncWebClient, team_id: str, user: str) -> bool:
        key = (team_id, user)
        if key not in self._admins:
            try:
                info = await client.users_info(user=user)
            except SlackApiError as exc:
                logger.info("users.info failed (%s): not an admin", exc.response.get("error"))
                return False
            person = info.get("user") or {}
            self._admins[key] = bool(
                person.get("is_admin") or person.get("is_owner") or person.get("is_primary_owner")
            ) and not person.get("deleted")
        return self._admins[key]

    async def _members(self, client: AsyncWebClient, team_id: str, group: str) -> frozenset[str]:
        key = (team_id, group)
        if key not in self._groups:
            try:
                listed = await client.usergroups_users_list(usergroup=group)
                self._groups[key] = frozenset(str(u) for u in listed.get("users") or [])
            except SlackApiError:
                self._groups[key] = frozenset()
        return self._groups[key]
