"""A fake Bot Connector on 127.0.0.1: the v3 conversation API a Teams bot posts to.

    async with FakeBotConnector() as connector:
        connector.fail("post", 429, retry_after=1)     # the next POST of an activity
        activity["serviceUrl"] = connector.service_url   # …/amer/, path prefix kept
        [message] = await connector.wait_for_messages(conversation_id, 1)

Every call is recorded (method, path, kind, conversation, activity id, Authorization, JSON
body, size in bytes, status answered); a POSTed typing activity is kind ``typing``, not a
message. Conversation ids arrive raw or %-encoded. POSTs answer
201 ``{"id": "act-N"}``; PUT ``{"id": id}``; DELETE 200. Failures are consumed in order, one
per matching call; status 0 drops the connection after reading the request.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import re
import time
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any
from urllib.parse import unquote

from aiohttp import web

from tests.fakes.loopback import serve_on_loopback

_IDS = itertools.count(1)
_ROUTE = re.compile(r"^/amer/v3/conversations/(?P<conv>.+?)/activities(?:/(?P<aid>[^/]+))?/?$")
_KINDS = {"post": ("send", "reply"), "update": ("update",), "delete": ("delete",)}


@dataclass(frozen=True)
class ConnectorCall:
    method: str
    kind: str  # send (POST …/activities), reply (POST …/activities/{id}), typing, update, delete,
    # other
    conversation: str | None
    activity_id: str | None  # the id in the path
    body: dict[str, Any] | None
    authorization: str | None
    size: int  # bytes of the request body
    status: int  # what the fake answered (0: connection dropped)
    created_id: str | None  # the id a successful POST returned
    at: float  # time.monotonic()


@dataclass
class Message:
    """A message the bot created, in its final state (after PUTs; ``deleted`` after DELETE)."""

    id: str
    conversation: str
    body: dict[str, Any]
    posted_at: float
    updates: list[dict[str, Any]] = field(default_factory=list)
    deleted: bool = False

    @property
    def final(self) -> dict[str, Any]:
        return self.updates[-1] if self.updates else self.body


@dataclass
class _Failure:
    kinds: tuple[str, ...]
    status: int
    retry_after: float | None
    count: int


class FakeBotConnector:
    def __init__(self) -> None:
        self.calls: list[ConnectorCall] = []
        self._failures: list[_Failure] = []
        self._runner: web.AppRunner | None = None
        self.service_url = ""

    async def __aenter__(self) -> FakeBotConnector:
        app = web.Application(client_max_size=16 * 2**20)
        app.router.add_route("*", "/{tail:.*}", self._handle)
        self._runner, port = await serve_on_loopback(app)
        self.service_url = f"http://127.0.0.1:{port}/amer/"
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    def fail(
        self, kind: str, status: int, *, retry_after: float | None = None, count: int = 1
    ) -> None:
        """Fail the next ``count`` calls of ``kind`` (post, update, delete) with ``status``."""
        self._failures.append(_Failure(_KINDS[kind], status, retry_after, count))

    def messages(self) -> list[Message]:
        found: dict[str, Message] = {}
        for call in self.calls:
            if call.kind in ("send", "reply") and call.created_id and call.body is not None:
                found[call.created_id] = Message(
                    call.created_id, call.conversation or "", call.body, call.at
                )
            elif call.kind == "update" and call.status == 200 and call.activity_id in found:
                found[call.activity_id].updates.append(call.body or {})
            elif call.kind == "delete" and call.status == 200 and call.activity_id in found:
                found[call.activity_id].deleted = True
        return list(found.values())

    def live_messages(self, conversation: str) -> list[Message]:
        return [m for m in self.messages() if m.conversation == conversation and not m.deleted]

    async def wait_for_messages(
        self, conversation: str, count: int, *, within_s: float = 15.0, settle: float = 0.5
    ) -> list[Message]:
        """Messages in ``conversation`` once ``count`` of them are past any placeholder,
        then ``settle`` seconds more so that a late duplicate would show."""
        deadline = time.monotonic() + within_s
        while time.monotonic() < deadline:
            if (
                len([m for m in self.live_messages(conversation) if m.updates or not _searching(m)])
                >= count
            ):
                await asyncio.sleep(settle)
                break
            await asyncio.sleep(0.02)
        return self.live_messages(conversation)

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        raw = await request.read()
        path = unquote(request.rel_url.raw_path)
        match = _ROUTE.match(path)
        conversation = match["conv"] if match else None
        activity_id = match["aid"] if match else None
        kind = "other"
        if match:
            kind = {"POST": "reply" if activity_id else "send", "PUT": "update"}.get(
                request.method, "delete" if request.method == "DELETE" else "other"
            )
        body = json.loads(raw) if raw else None
        if kind in ("send", "reply") and isinstance(body, dict) and body.get("type") == "typing":
            kind = "typing"  # progress, not a message: never a failure's target, never counted
        failure = next((f for f in self._failures if kind in f.kinds and f.count > 0), None)
        status, created, response = 200, None, None
        if failure is not None:
            failure.count -= 1
            status = failure.status
            if status:
                headers = {"Retry-After": str(failure.retry_after)} if failure.retry_after else {}
                error = {"error": {"code": "Injected", "message": f"fake connector {status}"}}
                response = web.json_response(error, status=status, headers=headers)
        elif kind == "typing":
            status, response = 201, web.json_response({}, status=201)
        elif kind in ("send", "reply"):
            status, created = 201, f"act-{next(_IDS)}"
            response = web.json_response({"id": created}, status=201)
        elif kind == "update":
            response = web.json_response({"id": activity_id})
        elif kind == "delete":
            response = web.Response(status=200)
        else:
            status = 404
            response = web.json_response({"error": {"code": "NotFound"}}, status=404)
        self.calls.append(
            ConnectorCall(
                request.method,
                kind,
                conversation,
                activity_id,
                body,
                request.headers.get("Authorization"),
                len(raw),
                status,
                created,
                time.monotonic(),
            )
        )
        if response is None:  # status 0: the request arrived, no reply ever comes
            assert request.transport is not None
            request.transport.close()
            return web.Response(status=500)
        return response


def _searching(message: Message) -> bool:
    return "Searching runbooks" in json.dumps(message.body)
