"""Microsoft Graph for Teams alert posts: subscriptions on a channel's messages, and reading one
message. App-only: a client-credentials token of the bot's own registration (TEAMS_APP_ID,
TEAMS_APP_PASSWORD) for the team's AAD tenant, where the team owner's resource-specific consent
(``ChannelMessage.Read.Group``) lets it read that team's channel messages.

Local mode has no password: calls then go without a token, like its Bot Connector calls, and
``graph_alerts_problem`` has already refused anything but loopback URLs for it.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from urllib.parse import quote

import aiohttp

from rag import Settings

logger = logging.getLogger(__name__)

GRAPH_SCOPE = "https://graph.microsoft.com/.default"
CALL_TIMEOUT_S = 15.0
# A token is renewed this long before it expires, so a call never carries one that lapses
# on the way.
TOKEN_MARGIN_S = 300.0


class GraphError(Exception):
    """A Graph or token call failed; ``status`` None means no HTTP answer was read."""

    def __init__(self, operation: str, status: int | None, detail: str = "") -> None:
        super().__init__(f"Graph {operation} failed ({status or 'no response'}) {detail}".strip())
        self.operation = operation
        self.status = status


@dataclass(frozen=True)
class GraphSubscription:
    subscription_id: str
    expires_at: datetime


@dataclass
class _Token:
    value: str
    renew_at: float  # time.monotonic()


class GraphClient:
    def __init__(self, settings: Settings) -> None:
        self._graph = settings.teams_graph_url.rstrip("/")
        self._login = settings.teams_login_url.rstrip("/")
        self._app_id = settings.teams_app_id or ""
        self._password = settings.teams_app_password
        self._tokens: dict[str, _Token] = {}
        # One token request per tenant at a time: concurrent jobs share the one it brings.
        self._token_locks: dict[str, asyncio.Lock] = {}

    async def create_subscription(
        self,
        aad_tenant: str,
        *,
        resource: str,
        notification_url: str,
        client_state: str,
        expires_at: datetime,
    ) -> GraphSubscription:
        """Subscribe to new messages of ``resource``; Graph validates ``notification_url`` (the
        ``validationToken`` handshake) before it answers."""
        body = {
            "changeType": "created",
            "notificationUrl": notification_url,
            "resource": resource,
            "expirationDateTime": _graph_time(expires_at),
            "clientState": client_state,
            "includeResourceData": False,
        }
        status, data = await self._call("POST", aad_tenant, "/subscriptions", body)
        if status != 201:
            raise GraphError("create subscription", status, _error_of(data))
        return _subscription(data)

    async def renew_subscription(
        self, aad_tenant: str, subscription_id: str, expires_at: datetime
    ) -> GraphSubscription | None:
        """The renewed subscription; None when Graph no longer knows it (it expired)."""
        path = f"/subscriptions/{quote(subscription_id, safe='')}"
        body = {"expirationDateTime": _graph_time(expires_at)}
        status, data = await self._call("PATCH", aad_tenant, path, body)
        if status == 404:
            return None
        if status != 200:
            raise GraphError("renew subscription", status, _error_of(data))
        return _subscription(data)

    async def delete_subscription(self, aad_tenant: str, subscription_id: str) -> None:
        """Delete it; one Graph no longer knows counts as deleted."""
        path = f"/subscriptions/{quote(subscription_id, safe='')}"
        status, data = await self._call("DELETE", aad_tenant, path)
        if status not in (200, 204, 404):
            raise GraphError("delete subscription", status, _error_of(data))

    async def channel_message(
        self, aad_tenant: str, team_id: str, channel_id: str, message_id: str
    ) -> dict[str, Any] | None:
        """A channel's root message (a ``chatMessage``); None when it is gone."""
        path = (
            f"/teams/{quote(team_id, safe='')}/channels/{quote(channel_id, safe=':@')}"
            f"/messages/{quote(message_id, safe='')}"
        )
        status, data = await self._call("GET", aad_tenant, path)
        if status == 404:
            return None
        if status != 200 or not isinstance(data, dict):
            raise GraphError("read message", status, _error_of(data))
        return data

    async def channel_replies(
        self, aad_tenant: str, team_id: str, channel_id: str, message_id: str, *, pages: int = 20
    ) -> list[dict[str, Any]]:
        """A channel message's replies (``chatMessage``s), every page up to ``pages``."""
        path = (
            f"/teams/{quote(team_id, safe='')}/channels/{quote(channel_id, safe=':@')}"
            f"/messages/{quote(message_id, safe='')}/replies?$top=50"
        )
        replies: list[dict[str, Any]] = []
        for _ in range(pages):
            status, data = await self._call("GET", aad_tenant, path)
            if status != 200 or not isinstance(data, dict):
                raise GraphError("read replies", status, _error_of(data))
            replies += [m for m in data.get("value") or [] if isinstance(m, dict)]
            following = str(data.get("@odata.nextLink") or "")
            if not following.startswith(self._graph + "/"):
                break  # the last page (or a link elsewhere, never followed with our token)
            path = following.removeprefix(self._graph)
        return replies

    async def _call(
        self, method: str, aad_tenant: str, path: str, body: dict[str, Any] | None = None
    ) -> tuple[int, Any]:
        headers = {"Accept": "application/json"}
        token = await self._token(aad_tenant)
        if token is not None:
            headers["Authorization"] = f"Bearer {token}"
        timeout = aiohttp.ClientTimeout(total=CALL_TIMEOUT_S)
        try:
            async with (
                aiohttp.ClientSession(timeout=timeout) as session,
                session.request(method, self._graph + path, json=body, headers=headers) as reply,
            ):
                if reply.status == 401:
                    self._tokens.pop(aad_tenant, None)  # revoked or rotated: fetch anew next time
                # An empty body (204) reads as None.
                return reply.status, await reply.json(content_type=None)
        except (aiohttp.ClientError, TimeoutError, ValueError) as exc:
            raise GraphError(f"{method} {path.split('/')[1]}", None, type(exc).__name__) from exc

    async def _token(self, aad_tenant: str) -> str | None:
        if self._password is None:
            return None
        async with self._token_locks.setdefault(aad_tenant, asyncio.Lock()):
            cached = self._tokens.get(aad_tenant)
            if cached is not None and time.monotonic() < cached.renew_at:
                return cached.value
            token = await self._fetch_token(aad_tenant, self._password.get_secret_value())
            self._tokens[aad_tenant] = token
            return token.value

    async def _fetch_token(self, aad_tenant: str, password: str) -> _Token:
        form = {
            "grant_type": "client_credentials",
            "client_id": self._app_id,
            "client_secret": password,
            "scope": GRAPH_SCOPE,
        }
        url = f"{self._login}/{quote(aad_tenant, safe='')}/oauth2/v2.0/token"
        timeout = aiohttp.ClientTimeout(total=CALL_TIMEOUT_S)
        try:
            async with (
                aiohttp.ClientSession(timeout=timeout) as session,
                session.post(url, data=form) as reply,
            ):
                data = await reply.json(content_type=None)
                status = reply.status
        except (aiohttp.ClientError, TimeoutError, ValueError) as exc:
            raise GraphError("token", None, type(exc).__name__) from exc
        if status != 200 or not isinstance(data, dict) or "access_token" not in data:
            # Never the body: an error response may echo the request.
            raise GraphError("token", status)
        lifetime = float(data.get("expires_in") or 3599)
        return _Token(str(data["access_token"]), time.monotonic() + lifetime - TOKEN_MARGIN_S)


def channel_resource(team_id: str, channel_id: str) -> str:
    """The subscription resource of a channel's messages (ids as Graph writes them)."""
    return f"/teams/{team_id}/channels/{channel_id}/messages"


def _subscription(data: Any) -> GraphSubscription:
    if not isinstance(data, dict) or not data.get("id") or not data.get("expirationDateTime"):
        raise GraphError("subscription", None, "answer without id or expiry")
    expires = str(data["expirationDateTime"]).replace("Z", "+00:00")
    return GraphSubscription(str(data["id"]), datetime.fromisoformat(expires))


def _graph_time(moment: datetime) -> str:
    return moment.isoformat(timespec="seconds").replace("+00:00", "Z")


def _error_of(data: Any) -> str:
    """Graph's error code (``{"error": {"code": …}}``), never its message text."""
    error = data.get("error") if isinstance(data, dict) else None
    code = error.get("code") if isinstance(error, dict) else None
    return str(code) if code else ""
