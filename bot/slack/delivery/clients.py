"""The Web API client a job posts with, found again from the stored request alone.

A job may run on another replica, long after the request that queued it, so it cannot borrow
Bolt's per-request client: with one bot token it is the app's own client; with OAuth, the
installation's token is looked up the way Bolt does it (rotation included). Tokens are never
stored in a job.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import aiohttp
from cachetools import TTLCache
from slack_bolt.async_app import AsyncBoltContext
from slack_bolt.authorization.async_authorize import AsyncAuthorize
from slack_sdk.web.async_client import AsyncWebClient

from bot.slack.tenancy import origin_of

_AUTH_TTL_S = 3600


@asynccontextmanager
async def web_api_session(timeout_s: float) -> AsyncIterator[aiohttp.ClientSession]:
    """One keep-alive connection pool for every Web API call of a serving process.

    Without a session of its own, slack_sdk opens and closes a connection per call: five per
    answer (reaction, status, post, status, reaction), a fifth of the event loop's time under
    load (docs/benchmarks.md, "Where an answer's time goes"). The session's timeout is the
    only one slack_sdk applies to a call made through it.
    """
    timeout = aiohttp.ClientTimeout(total=timeout_s)
    async with aiohttp.ClientSession(timeout=timeout) as session:
        yield session


class SlackClients:
    def __init__(self, client: AsyncWebClient, authorize: AsyncAuthorize | None) -> None:
        self._client = client
        self._authorize = authorize
        self._identities: TTLCache[str, tuple[str, str]] = TTLCache(maxsize=1000, ttl=_AUTH_TTL_S)

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
            session=self._client.session,
        )

    async def bot_user_id(self, client: AsyncWebClient, body: dict[str, Any]) -> str | None:
        """The bot's own user id: from the event's authorizations, else ``auth.test`` (cached)."""
        return authorized_bot_user(body) or (await self._identity(client))[0] or None

    async def sent_by_bot(self, client: AsyncWebClient, body: dict[str, Any]) -> bool:
        """Whether the event's message is the bot's own (by its user id or its bot id): a
        queued message never passed Bolt's own check for self events, so it is made here."""
        event = body.get("event") or {}
        user, bot_id = event.get("user"), event.get("bot_id")
        if user and user == await self.bot_user_id(client, body):
            return True
        return bool(bot_id) and bot_id == (await self._identity(client))[1]

    async def _identity(self, client: AsyncWebClient) -> tuple[str, str]:
        """(user id, bot id) of the token's bot, from ``auth.test``, cached per token."""
        token = client.token or ""
        if token not in self._identities:
            response = await client.auth_test()
            user_id, bot_id = response.get("user_id"), response.get("bot_id")
            self._identities[token] = (str(user_id or ""), str(bot_id or ""))
        return self._identities[token]


def authorized_bot_user(body: dict[str, Any]) -> str | None:
    """The bot's user id as the event's ``authorizations`` name it (no call: safe at intake)."""
    authorizations = body.get("authorizations")
    for authorization in authorizations if isinstance(authorizations, list) else []:
        if isinstance(authorization, dict) and authorization.get("is_bot"):
            user_id = authorization.get("user_id")
            if isinstance(user_id, str) and user_id:
                return user_id
    return None


def requester(body: dict[str, Any]) -> str | None:
    """Who made the request: an event's ``user``, a command's ``user_id``, a click's ``user``."""
    event, user = body.get("event") or {}, body.get("user")
    found = (
        event.get("user")
        or body.get("user_id")
        or (user.get("id") if isinstance(user, dict) else None)
    )
    return found if isinstance(found, str) and found else None
