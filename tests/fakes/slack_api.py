"""A fake Slack on 127.0.0.1: the Web API the app calls, and signed deliveries into the app.

    async with FakeSlack() as slack:
        client = AsyncWebClient(token="xoxb-T_ACME", base_url=slack.base_url)
        slack.fail("chat.postMessage", rate_limited(retry_after=1))
        sender = SlackSender(app_url, "secret")
        await sender.event({"type": "app_mention", ...})
        [post] = await slack.wait_for("chat.postMessage")

Every call is recorded with its method and parsed body (form or JSON). Failures are queued per
method and consumed one per call; ``stored_then(...)`` makes a post that Slack kept although the
app never heard so (a 5xx or a dropped connection after storing it). ``auth.test`` answers for
the team named in the token (``xoxb-T_ACME`` → ``T_ACME``), so one fake serves several
workspaces. Posted messages are kept with their metadata, and ``conversations.replies`` returns
a thread from them, ``conversations.history`` the top-level ones (metadata only with
``include_all_metadata``), as Slack does.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import time
import uuid
from collections import defaultdict, deque
from collections.abc import Callable
from dataclasses import dataclass
from types import TracebackType
from typing import Any, NamedTuple
from urllib.parse import urlencode

import aiohttp
from aiohttp import web
from slack_sdk.signature import SignatureVerifier

from tests.fakes.loopback import serve_on_loopback

BOT_USER_ID = "UBOT"
# Shared by every fake in the process: message ts stay unique across a test session, as in Slack.
_MESSAGE_TS = itertools.count(1)
_last_post_us = 0


def _post_ts(thread_ts: object) -> str:
    """A posted message's ts, as Slack makes them: from the clock, increasing, and after the
    thread's root (tests use made-up root ts, some of them in the future)."""
    global _last_post_us
    after = int(float(thread_ts) * 1_000_000) + 1 if isinstance(thread_ts, str) else 0
    _last_post_us = max(time.time_ns() // 1000, _last_post_us + 1, after)
    return f"{_last_post_us // 1_000_000}.{_last_post_us % 1_000_000:06d}"


BOT_ID = "BBOT"


@dataclass(frozen=True)
class SlackCall:
    method: str  # a Web API method, or "response_url"
    body: dict[str, Any]
    token: str | None
    status: int  # the HTTP status the fake answered with (0: connection dropped)
    ok: bool  # whether the call succeeded from the app's point of view
    reply: dict[str, Any]
    at: float  # time.monotonic() when it arrived
    key: str | None = None  # the response_url id
    client_port: int = 0  # the caller's port: calls over one kept-alive connection share it


@dataclass(frozen=True)
class Failure:
    status: int  # 0 drops the connection without a reply
    error: str = ""
    retry_after: int | None = None
    stored: bool = False  # the post was kept before the failure (its outcome is unknown)


def stored_then(failure: Failure) -> Failure:
    """A post Slack stored although it answered ``failure`` (e.g. a 500 or a reset)."""
    return Failure(failure.status, failure.error, failure.retry_after, stored=True)


def rate_limited(retry_after: int = 1) -> Failure:
    return Failure(429, "ratelimited", retry_after)


def server_error(status: int = 500) -> Failure:
    return Failure(status, "internal_error")


def connection_reset() -> Failure:
    return Failure(0)


def api_error(error: str) -> Failure:
    """HTTP 200 with ``{"ok": false, "error": error}``, e.g. ``not_in_channel``."""
    return Failure(200, error)


class FakeSlack:
    def __init__(self) -> None:
        self.calls: list[SlackCall] = []
        self.threads: dict[tuple[str, str], dict[str, Any]] = {}
        self.usergroups: dict[str, list[str]] = {}  # what usergroups.users.list answers
        self.workspace_admins: set[str] = set()  # users.info says is_admin for these
        self.bot_channels: list[tuple[str, str]] = []  # users.conversations: (id, name)
        self.messages: dict[str, list[dict[str, Any]]] = defaultdict(list)  # channel → posts
        # What users.info says of a user (is_admin …), conversations.info of a channel
        # (is_private …) and conversations.members lists; unknown ones: a plain member, a
        # public channel.
        self.users: dict[str, dict[str, Any]] = {}
        self.channels: dict[str, dict[str, Any]] = {}
        self.members: dict[str, list[str]] = {}
        self.uploads: dict[str, bytes] = {}  # file id → the bytes sent to its upload URL
        self._failures: dict[str, deque[Failure]] = defaultdict(deque)
        self._runner: web.AppRunner | None = None
        self._port = 0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._port}/api/"

    def response_url(self, key: str | None = None) -> str:
        return f"http://127.0.0.1:{self._port}/response/{key or uuid.uuid4().hex}"

    def fail(self, method: str, failure: Failure, *, times: int = 1) -> None:
        self._failures[method].extend([failure] * times)

    def set_thread_root(self, channel: str, ts: str, message: dict[str, Any]) -> None:
        """What ``conversations.replies`` returns first for this thread."""
        self.threads[(channel, ts)] = {"ts": ts, **message}

    def thread_posts(self, channel: str, thread_ts: str) -> list[dict[str, Any]]:
        """Messages posted (and kept) in a thread, as Slack would list its replies."""
        return [m for m in self.messages[channel] if m.get("thread_ts") == thread_ts]

    def calls_to(self, method: str, *, ok: bool | None = True) -> list[SlackCall]:
        return [c for c in self.calls if c.method == method and (ok is None or c.ok == ok)]

    async def wait_for(
        self,
        method: str,
        count: int = 1,
        *,
        where: Callable[[SlackCall], bool] = lambda call: True,
        within_s: float = 15.0,
    ) -> list[SlackCall]:
        """Poll until ``count`` successful matching calls were made; fail loudly otherwise."""
        deadline = time.monotonic() + within_s
        while True:
            found = [c for c in self.calls_to(method) if where(c)]
            if len(found) >= count:
                return found
            if time.monotonic() > deadline:
                seen = [(c.method, c.status, c.ok) for c in self.calls]
                raise AssertionError(f"{count} × {method} not seen in {within_s}s; calls: {seen}")
            await asyncio.sleep(0.01)

    async def __aenter__(self) -> FakeSlack:
        app = web.Application()
        app.router.add_post("/api/{method}", self._api)
        app.router.add_get("/api/{method}", self._api)  # slack_sdk GETs a few methods
        app.router.add_post("/response/{key}", self._response_url)
        app.router.add_post("/upload/{file_id}", self._upload)
        self._runner, self._port = await serve_on_loopback(app)
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    async def _api(self, request: web.Request) -> web.StreamResponse:
        method = request.match_info["method"]
        body = await _parse(request)
        auth = request.headers.get("Authorization", "")
        token = auth.removeprefix("Bearer ") or body.get("token")
        queued = self._failures[method]
        if queued:
            return self._fail(request, method, body, token, queued.popleft())
        reply = self._reply(method, body, token)
        peer = request.transport.get_extra_info("peername") if request.transport else None
        port = int(peer[1]) if peer else 0
        call = SlackCall(method, body, token, 200, bool(reply["ok"]), reply, _now(), None, port)
        self.calls.append(call)
        return web.json_response(reply)

    async def _upload(self, request: web.Request) -> web.StreamResponse:
        """files.getUploadURLExternal's upload URL: the file's bytes, as Slack takes them."""
        self.uploads[request.match_info["file_id"]] = await request.read()
        return web.Response(text="OK - 0")

    async def _response_url(self, request: web.Request) -> web.StreamResponse:
        body = await _parse(request)
        queued = self._failures["response_url"]
        if queued:
            return self._fail(request, "response_url", body, None, queued.popleft())
        key = request.match_info["key"]
        self.calls.append(SlackCall("response_url", body, None, 200, True, {}, _now(), key))
        return web.Response(text="ok")

    def _fail(
        self,
        request: web.Request,
        method: str,
        body: dict[str, Any],
        token: str | None,
        failure: Failure,
    ) -> web.StreamResponse:
        reply = {"ok": False, "error": failure.error}
        if failure.stored and method == "chat.postMessage":
            self._keep(body)
        self.calls.append(SlackCall(method, body, token, failure.status, False, reply, _now()))
        if failure.status == 0:
            assert request.transport is not None
            request.transport.abort()
            return web.Response()
        headers = {"Retry-After": str(failure.retry_after)} if failure.retry_after else None
        return web.json_response(reply, status=failure.status, headers=headers)

    def _reply(self, method: str, body: dict[str, Any], token: str | None) -> dict[str, Any]:
        ts = f"1700000000.{next(_MESSAGE_TS):06d}"
        if method == "auth.test":
            team = _team_of(token)
            return {
                "ok": True,
                "team_id": team,
                "team": team,
                "user_id": BOT_USER_ID,
                "user": "runbook-bot",
                "bot_id": BOT_ID,
                "url": "https://fake.slack/",
                "is_enterprise_install": False,
            }
        if method == "chat.postMessage":
            message = self._keep(body)
            return {
                "ok": True,
                "channel": body.get("channel"),
                "ts": message["ts"],
                "message": body,
            }
        if method == "chat.update":
            return {"ok": True, "channel": body.get("channel"), "ts": body.get("ts")}
        if method == "chat.postEphemeral":
            return {"ok": True, "message_ts": ts}
        if method == "assistant.threads.setStatus":
            # The AI loading status; fail it with api_error("missing_scope") to test fallback.
            return {"ok": True}
        if method == "conversations.replies":
            return self._replies(body)
        if method == "conversations.history":
            return self._history(body)
        if method == "oauth.v2.access":
            return _oauth_access(body)
        if method == "views.open":
            view = body.get("view")
            parsed = json.loads(view) if isinstance(view, str) else view
            return {"ok": True, "view": {"id": f"V{next(_MESSAGE_TS):06d}", **(parsed or {})}}
        if method == "chat.getPermalink":
            channel, message_ts = str(body.get("channel")), str(body.get("message_ts"))
            path = f"{channel}/p{message_ts.replace('.', '')}"
            return {
                "ok": True,
                "channel": channel,
                "permalink": f"https://fake.slack/archives/{path}",
            }
        if method == "users.info":
            user = str(body.get("user"))
            return {
                "ok": True,
                "user": {
                    "id": user,
                    "name": user.lower(),
                    "is_admin": user in self.workspace_admins,
                    "is_owner": False,
                    **self.users.get(user, {}),
                },
            }
        if method == "conversations.info":
            channel = str(body.get("channel"))
            return {
                "ok": True,
                "channel": {
                    "id": channel,
                    "name": channel.lower(),
                    **self.channels.get(channel, {}),
                },
            }
        if method == "conversations.members":
            return {"ok": True, "members": self.members.get(str(body.get("channel")), [])}
        if method == "files.getUploadURLExternal":
            file_id = f"F{next(_MESSAGE_TS):06d}"
            url = f"http://127.0.0.1:{self._port}/upload/{file_id}"
            return {"ok": True, "upload_url": url, "file_id": file_id}
        if method == "files.completeUploadExternal":
            files = body.get("files")
            listed = json.loads(files) if isinstance(files, str) else files or []
            return {
                "ok": True,
                "files": [{"id": f.get("id"), "title": f.get("title")} for f in listed],
            }
        if method == "users.conversations":
            channels = [
                {"id": c, "name": n, "is_channel": True, "is_member": True}
                for c, n in self.bot_channels
            ]
            return {"ok": True, "channels": channels, "response_metadata": {"next_cursor": ""}}
        if method in ("views.publish", "views.update"):
            view = body.get("view")
            parsed = json.loads(view) if isinstance(view, str) else view
            view_id = body.get("view_id") or f"V{next(_MESSAGE_TS):06d}"
            return {"ok": True, "view": {"id": view_id, **(parsed or {})}}
        if method == "usergroups.list":
            listed = [{"id": g, "handle": g.lower()} for g in self.usergroups]
            return {"ok": True, "usergroups": listed}
        if method == "usergroups.users.list":
            members = self.usergroups.get(str(body.get("usergroup")))
            if members is None:
                return {"ok": False, "error": "no_such_subteam"}
            return {"ok": True, "users": members}
        return {"ok": True}

    def _keep(self, body: dict[str, Any]) -> dict[str, Any]:
        ts = _post_ts(body.get("thread_ts"))
        message = {
            "type": "message",
            "ts": ts,
            "bot_id": BOT_ID,
            **{k: body[k] for k in ("text", "blocks", "thread_ts", "metadata") if body.get(k)},
        }
        self.messages[str(body.get("channel"))].append(message)
        return message

    def _replies(self, body: dict[str, Any]) -> dict[str, Any]:
        channel, ts = str(body.get("channel")), str(body.get("ts"))
        root = self.threads.get((channel, ts))
        posts = self.thread_posts(channel, ts)
        if root is None and not posts:
            return {"ok": False, "error": "thread_not_found"}
        oldest = float(body.get("oldest") or 0)
        posts = [m for m in posts if float(m["ts"]) >= oldest]
        if str(body.get("include_all_metadata")).lower() not in ("1", "true"):
            posts = [{k: v for k, v in m.items() if k != "metadata"} for m in posts]
        messages = [root or {"ts": ts, "type": "message"}, *posts]
        limit = int(body.get("limit") or 1000)
        return {"ok": True, "messages": messages[:limit], "has_more": len(messages) > limit}

    def _history(self, body: dict[str, Any]) -> dict[str, Any]:
        """The channel's top-level posts since ``oldest``, newest first, as Slack lists them."""
        oldest = float(body.get("oldest") or 0)
        posts = [
            m
            for m in self.messages[str(body.get("channel"))]
            if "thread_ts" not in m and float(m["ts"]) >= oldest
        ]
        if str(body.get("include_all_metadata")).lower() not in ("1", "true"):
            posts = [{k: v for k, v in m.items() if k != "metadata"} for m in posts]
        limit = int(body.get("limit") or 100)
        return {"ok": True, "messages": posts[::-1][:limit], "has_more": len(posts) > limit}


class Reply(NamedTuple):
    """The app's HTTP answer to a delivery: status, time to answer (the ack), and body."""

    status: int
    seconds: float
    body: str


class SlackSender:
    """Delivers requests into the app as Slack does: raw body, timestamp, v0 HMAC signature."""

    def __init__(self, url: str, signing_secret: str) -> None:
        self.url = url
        self.verifier = SignatureVerifier(signing_secret)
        self.event_ids = itertools.count(1)

    def envelope(
        self, event: dict[str, Any], *, team_id: str = "T_ACME", event_id: str | None = None
    ) -> str:
        """The raw Events API body Slack would send for ``event``."""
        return json.dumps(
            {
                "type": "event_callback",
                "team_id": team_id,
                "api_app_id": "A_RUNBOOK",
                "event_id": event_id or f"Ev{next(self.event_ids):08d}{uuid.uuid4().hex[:6]}",
                "event_time": int(time.time()),
                "event": {"team": team_id, **event},
                "authorizations": [{"team_id": team_id, "user_id": BOT_USER_ID, "is_bot": True}],
            }
        )

    async def event(
        self,
        event: dict[str, Any],
        *,
        team_id: str = "T_ACME",
        event_id: str | None = None,
        retry_num: int | None = None,
    ) -> Reply:
        raw = self.envelope(event, team_id=team_id, event_id=event_id)
        retry = {"X-Slack-Retry-Num": str(retry_num), "X-Slack-Retry-Reason": "http_timeout"}
        return await self.post(raw, "application/json", headers=retry if retry_num else None)

    async def command(self, fields: dict[str, str]) -> Reply:
        return await self.post(urlencode(fields), "application/x-www-form-urlencoded")

    async def interaction(self, payload: dict[str, Any]) -> Reply:
        raw = urlencode({"payload": json.dumps(payload)})
        return await self.post(raw, "application/x-www-form-urlencoded")

    async def post(
        self,
        raw_body: str,
        content_type: str,
        *,
        timestamp: int | None = None,
        signature: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> Reply:
        ts = str(timestamp if timestamp is not None else int(time.time()))
        signed = {
            "Content-Type": content_type,
            "X-Slack-Request-Timestamp": ts,
            "X-Slack-Signature": signature
            or str(self.verifier.generate_signature(timestamp=ts, body=raw_body)),
            **(headers or {}),
        }
        started = time.perf_counter()
        async with aiohttp.ClientSession() as session:
            async with session.post(self.url, data=raw_body.encode(), headers=signed) as resp:
                body = await resp.text()
                return Reply(resp.status, time.perf_counter() - started, body)


async def _parse(request: web.Request) -> dict[str, Any]:
    """JSON, form and query-string arguments alike (slack_sdk uses all three)."""
    if request.content_type == "application/json":
        parsed = await request.json()
        return {**request.query, **(parsed if isinstance(parsed, dict) else {"_": parsed})}
    form: dict[str, Any] = {**request.query, **(await request.post())}
    for key in ("blocks", "attachments", "view"):
        if isinstance(form.get(key), str):
            form[key] = json.loads(form[key])
    return form


def _now() -> float:
    return time.monotonic()


def _team_of(token: str | None) -> str:
    parts = (token or "").split("-")
    return parts[1] if len(parts) > 1 and parts[1].startswith("T") else "T_ACME"


def _oauth_access(body: dict[str, Any]) -> dict[str, Any]:
    """An install of the workspace the code names (``code=T_OAUTH``), with a rotating token that
    expires in a minute; or that token's refresh (``grant_type=refresh_token``)."""
    if body.get("grant_type") == "refresh_token":
        team = _team_of(str(body.get("refresh_token")).replace("xoxe", "xoxb", 1))
        return {
            "ok": True,
            "token_type": "bot",
            "access_token": f"xoxb-{team}-rotated",
            "refresh_token": f"xoxe-{team}-2",
            "expires_in": 43200,
        }
    team = str(body.get("code") or "T_OAUTH")
    return {
        "ok": True,
        "app_id": "A_RUNBOOK",
        "authed_user": {"id": "U_INSTALLER"},
        "scope": "app_mentions:read,chat:write,commands",
        "token_type": "bot",
        "access_token": f"xoxb-{team}-installed",
        "refresh_token": f"xoxe-{team}-1",
        "expires_in": 60,
        "bot_user_id": BOT_USER_ID,
        "team": {"id": team, "name": "Installed workspace"},
        "enterprise": None,
        "is_enterprise_install": False,
    }
