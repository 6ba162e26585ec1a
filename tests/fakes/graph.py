"""A fake Microsoft Graph and Entra ID token endpoint on 127.0.0.1, for Teams alert posts.

    async with FakeGraph(client_secret) as graph:
        settings.teams_graph_url = graph.graph_url; settings.teams_login_url = graph.login_url
        graph.messages[(team, channel, id)] = chat_message      # what GET …/messages/{id} reads
        status = await graph.notify(subscription_id, message_id)  # a change notification

The token endpoint issues a token for ``client_credentials`` with the right secret and the
Graph scope; every Graph call must carry a token it issued (else 401), and a subscription
belongs to the tenant its token was issued for.
Creating a subscription runs Graph's validation handshake first: a POST to the notification
URL with ``?validationToken=…``, which must answer 200 ``text/plain`` with the token within
10 s, or the subscription is refused (400). Every call is recorded.
"""

from __future__ import annotations

import itertools
import secrets
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any

import aiohttp
from aiohttp import web

from tests.fakes.loopback import serve_on_loopback

VALIDATION_TIMEOUT_S = 10.0
_IDS = itertools.count(1)


@dataclass(frozen=True)
class GraphCall:
    method: str
    path: str
    authorized: bool


@dataclass(frozen=True)
class Validation:
    token: str
    status: int
    content_type: str
    body: str


@dataclass
class FakeGraph:
    client_secret: str
    calls: list[GraphCall] = field(default_factory=list)
    validations: list[Validation] = field(default_factory=list)
    subscriptions: dict[str, dict[str, Any]] = field(default_factory=dict)
    messages: dict[tuple[str, str, str], dict[str, Any]] = field(default_factory=dict)
    # (team, channel, root message id) → its replies, oldest first; served two to a page.
    replies: dict[tuple[str, str, str], list[dict[str, Any]]] = field(default_factory=dict)
    tokens: dict[str, str] = field(default_factory=dict)  # token → the AAD tenant it is for
    token_requests: list[dict[str, str]] = field(default_factory=list)
    _runner: web.AppRunner | None = None
    url: str = ""

    @property
    def graph_url(self) -> str:
        return f"{self.url}/v1.0"

    @property
    def login_url(self) -> str:
        return self.url

    async def __aenter__(self) -> FakeGraph:
        app = web.Application()
        app.router.add_post("/{tenant}/oauth2/v2.0/token", self._token)
        app.router.add_post("/v1.0/subscriptions", self._create)
        app.router.add_patch("/v1.0/subscriptions/{id}", self._renew)
        app.router.add_delete("/v1.0/subscriptions/{id}", self._delete)
        app.router.add_get(
            "/v1.0/teams/{team}/channels/{channel}/messages/{message}/replies", self._replies
        )
        app.router.add_get(
            "/v1.0/teams/{team}/channels/{channel}/messages/{message}", self._message
        )
        self._runner, port = await serve_on_loopback(app)
        self.url = f"http://127.0.0.1:{port}"
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    def subscription_for(self, resource: str) -> dict[str, Any]:
        [found] = [s for s in self.subscriptions.values() if s["resource"] == resource]
        return found

    async def notify(
        self,
        subscription_id: str,
        message_id: str,
        *,
        client_state: str | None = None,
        reply_to: str | None = None,
        change: str = "created",
    ) -> int:
        """POST a change notification for a new message (or reply) to the subscription's URL,
        as Graph does; returns the status answered."""
        subscription = self.subscriptions[subscription_id]
        team, channel = subscription["team"], subscription["channel"]
        resource = f"teams('{team}')/channels('{channel}')/messages('{reply_to or message_id}')"
        if reply_to:
            resource += f"/replies('{message_id}')"
        notification = {
            "subscriptionId": subscription_id,
            "changeType": change,
            "clientState": subscription["clientState"] if client_state is None else client_state,
            "subscriptionExpirationDateTime": subscription["expirationDateTime"],
            "resource": resource,
            "resourceData": {"id": message_id, "@odata.type": "#Microsoft.Graph.chatMessage"},
            "tenantId": subscription["tenant"],
        }
        async with (
            aiohttp.ClientSession() as session,
            session.post(subscription["notificationUrl"], json={"value": [notification]}) as r,
        ):
            return r.status

    def _authorized(self, request: web.Request, tenant: str | None) -> bool:
        header = request.headers.get("Authorization", "")
        issued_for = self.tokens.get(header.removeprefix("Bearer "))
        authorized = header.startswith("Bearer ") and issued_for is not None
        authorized = authorized and (tenant is None or issued_for == tenant)
        self.calls.append(GraphCall(request.method, request.path, authorized))
        return authorized

    async def _token(self, request: web.Request) -> web.Response:
        form = dict(await request.post())
        tenant = request.match_info["tenant"]
        self.token_requests.append({k: str(v) for k, v in form.items() if k != "client_secret"})
        if (
            form.get("grant_type") != "client_credentials"
            or form.get("client_secret") != self.client_secret
            or form.get("scope") != "https://graph.microsoft.com/.default"
        ):
            return web.json_response({"error": "invalid_client"}, status=401)
        token = f"graph-token-{next(_IDS)}-{secrets.token_hex(4)}"
        self.tokens[token] = tenant
        return web.json_response(
            {"token_type": "Bearer", "expires_in": 3599, "access_token": token}
        )

    async def _create(self, request: web.Request) -> web.Response:
        if not self._authorized(request, None):
            return web.json_response({"error": {"code": "InvalidAuthenticationToken"}}, status=401)
        body = await request.json()
        token = secrets.token_urlsafe(16) + " =&?"  # must come back exactly, decoded
        try:
            async with (
                aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(VALIDATION_TIMEOUT_S)) as s,
                s.post(body["notificationUrl"], params={"validationToken": token}) as reply,
            ):
                text = await reply.text()
                self.validations.append(Validation(token, reply.status, reply.content_type, text))
                valid = reply.status == 200 and reply.content_type == "text/plain" and text == token
        except (aiohttp.ClientError, TimeoutError):
            valid = False
        if not valid:
            return web.json_response({"error": {"code": "ValidationError"}}, status=400)
        _, team, _, channel, _ = body["resource"].strip("/").split("/")
        tenant = self.tokens[request.headers["Authorization"].removeprefix("Bearer ")]
        subscription = {
            **body,
            "id": f"sub-{next(_IDS)}",
            "team": team,
            "channel": channel,
            "tenant": tenant,
        }
        self.subscriptions[subscription["id"]] = subscription
        return web.json_response(subscription, status=201)

    async def _renew(self, request: web.Request) -> web.Response:
        if not self._authorized(request, None):
            return web.json_response({"error": {"code": "InvalidAuthenticationToken"}}, status=401)
        subscription = self.subscriptions.get(request.match_info["id"])
        if subscription is None:
            return web.json_response({"error": {"code": "ResourceNotFound"}}, status=404)
        subscription["expirationDateTime"] = (await request.json())["expirationDateTime"]
        subscription["renewals"] = subscription.get("renewals", 0) + 1
        return web.json_response(subscription)

    async def _delete(self, request: web.Request) -> web.Response:
        if not self._authorized(request, None):
            return web.json_response({"error": {"code": "InvalidAuthenticationToken"}}, status=401)
        if self.subscriptions.pop(request.match_info["id"], None) is None:
            return web.json_response({"error": {"code": "ResourceNotFound"}}, status=404)
        return web.Response(status=204)

    async def _replies(self, request: web.Request) -> web.Response:
        if not self._authorized(request, None):
            return web.json_response({"error": {"code": "InvalidAuthenticationToken"}}, status=401)
        info = request.match_info
        key = (info["team"], info["channel"], info["message"])
        if key not in self.messages and key not in self.replies:
            return web.json_response({"error": {"code": "NotFound"}}, status=404)
        replies = self.replies.get(key, [])
        skip = int(request.query.get("$skiptoken") or 0)
        page: dict[str, Any] = {"value": replies[skip : skip + 2]}
        if skip + 2 < len(replies):
            page["@odata.nextLink"] = f"{self.url}{request.path}?$skiptoken={skip + 2}"
        return web.json_response(page)

    async def _message(self, request: web.Request) -> web.Response:
        if not self._authorized(request, None):
            return web.json_response({"error": {"code": "InvalidAuthenticationToken"}}, status=401)
        key = (
            request.match_info["team"],
            request.match_info["channel"],
            request.match_info["message"],
        )
        message = self.messages.get(key)
        if message is None:
            return web.json_response({"error": {"code": "NotFound"}}, status=404)
        return web.json_response(message)
