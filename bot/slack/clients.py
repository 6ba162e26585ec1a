"""The Web API client a job posts with, found again from the stored request alone.

A job may run on another replica, long after the request that queued it, so it cannot borrow
Bolt's per-request client: with one bot token it is the app's own client; with OAuth, the
installation's token is looked up the way Bolt does it (rotation included). Tokens are never
stored in a job.
"""

from __future__ import annotations

from typing import Any

from cachetools import TTLCache
from slack_bolt.async_app import AsyncBoltContext
from slack_bolt.authorization.async_authorize import AsyncAuthorize
from slack_sdk.web.async_client import AsyncWebClient

from bot.slack.tenancy import origin_of

_BOT_USER_TTL_S = 3600


class SlackClients:
    def __init__(self, client: AsyncWebClient, authorize: AsyncAuthorize | None) -> None:
        self._client = client
        self._authorize = authorize
        self._bot_users: TTLCache[str, str] = TTLCache(maxsize=1000, ttl=_BOT_USER_TTL_S)

    async def for_request(self, body: dict[str, Any]) -> AsyncWebClient | None:
        """The client for the workspace ``body`` came from; None when it is not installed."""
        if self._authorize is None:
            return self._client
        origin = origin_of(body)
        authorizations = body.get("authorizations") or [{}]
        context = AsyncBoltContext(
            client=self._client,  # Bolt calls auth.test through it (cached per token)
            is_enterprise_install=bool(authorizations[0].get("is_enterprise_install")),
        )
        found = await self._authorize(
            context=context,
            enterprise_id=origin.enterprise_id,
            team_id=origin.team_id,
            # As Bolt passes it: with None, the installer's own row would be found as "this
            # user's" install and its token rotated twice.
            user_id=requester(body),
        )
        if found is None or not found.bot_token:
            return None
        return AsyncWebClient(
            token=found.bot_token,
            base_url=self._client.base_url,
            timeout=self._client.timeout,
            retry_handlers=list(self._client.retry_handlers),
        )

    async def bot_user_id(self, client: AsyncWebClient, body: dict[str, Any]) -> str | None:
        """The bot's own user id: from the event's authorizations, else ``auth.test`` (cached)."""
        for authorization in body.get("authorizations") or []:
            if isinstance(authorization, dict) and authorization.get("is_bot"):
                user_id = authorization.get("user_id")
                if isinstance(user_id, str) and user_id:
                    return user_id
        token = client.token or ""
        if token not in self._bot_users:
            response = await client.auth_test()
            self._bot_users[token] = str(response.get("user_id") or "")
        return self._bot_users[token] or None


def requester(body: dict[str, Any]) -> str | None:
    """Who made the request: an event's ``user``, a command's ``user_id``, a click's ``user``."""
    event, user = body.get("event") or {}, body.get("user")
    found = (
        event.get("user")
        or body.get("user_id")
        or (user.get("id") if isinstance(user, dict) else None)
    )
    return found if isinstance(found, str) and found else None
