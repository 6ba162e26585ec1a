"""A fake Anthropic Messages API on 127.0.0.1: scripted replies, injected failures, recorded calls.

    async with FakeAnthropic() as fake:
        fake.enqueue(error(429), tool_answer("answered", "Restart it. [1]", [(1, "...")]))
        client = AsyncAnthropic(api_key="sk-test", base_url=fake.base_url, max_retries=0)

Each ``POST /v1/messages`` takes the next behaviour from the queue, or ``default`` when it is
empty. Requests are recorded with their authentication headers removed.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Protocol

from aiohttp import web

from tests.fakes.loopback import serve_on_loopback

_AUTH_HEADERS = frozenset({"x-api-key", "authorization"})
_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}
_ids = itertools.count(1)


@dataclass(frozen=True)
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]
    body: Any
    authenticated: bool


class Behaviour(Protocol):
    async def respond(self, fake: FakeAnthropic, body: Any) -> web.Response: ...


@dataclass(frozen=True)
class ToolAnswer:
    status: str
    text: str
    citations: Sequence[tuple[int, str]]
    input_tokens: int = 812
    output_tokens: int = 96

    async def respond(self, fake: FakeAnthropic, body: Any) -> web.Response:
        tool_input = {
            "status": self.status,
            "text": self.text,
            "citations": [{"n": n, "quote": quote} for n, quote in self.citations],
        }
        block = {"type": "tool_use", "id": f"toolu_{next(_ids):06d}", "name": "submit_answer"}
        return _message(
            body, [{**block, "input": tool_input}], self.input_tokens, self.output_tokens
        )


@dataclass(frozen=True)
class RawMessage:
    """A 200 reply with the given content blocks, for shapes the other behaviours do not make."""

    content: list[dict[str, Any]]
    stop_reason: str = "end_turn"

    async def respond(self, fake: FakeAnthropic, body: Any) -> web.Response:
        return _message(body, self.content, 812, 0, stop_reason=self.stop_reason)


@dataclass(frozen=True)
class Error:
    status: int
    body: Any
    retry_after: float | None

    async def respond(self, fake: FakeAnthropic, body: Any) -> web.Response:
        headers = {"request-id": f"req_fake_{next(_ids):06d}"}
        if self.retry_after is not None:
            headers["retry-after"] = str(self.retry_after)
        return web.json_response(self.body, status=self.status, headers=headers)


@dataclass(frozen=True)
class Garbage:
    content_type: str

    async def respond(self, fake: FakeAnthropic, body: Any) -> web.Response:
        return web.Response(
            text="<html>upstream proxy error</html>", content_type=self.content_type
        )


@dataclass(frozen=True)
class Delay:
    seconds: float
    then: Behaviour | None

    async def respond(self, fake: FakeAnthropic, body: Any) -> web.Response:
        # Closing the fake ends the wait, so a hung request never holds up the test's teardown.
        try:
            await asyncio.wait_for(fake.closing.wait(), timeout=self.seconds)
        except TimeoutError:
            pass
        return await (self.then or fake.default).respond(fake, body)


def tool_answer(
    status: str, text: str, citations: Sequence[tuple[int, str]] = (), **usage: int
) -> ToolAnswer:
    return ToolAnswer(status, text, citations, **usage)


def error(status: int, body: Any = None, retry_after: float | None = None) -> Error:
    """An error reply in Anthropic's shape, unless ``body`` replaces it."""
    if body is None:
        kind = _ERROR_TYPES.get(status, "api_error")
        body = {"type": "error", "error": {"type": kind, "message": f"fake {kind}"}}
    return Error(status, body, retry_after)


def garbage(content_type: str = "text/html") -> Garbage:
    return Garbage(content_type)


def empty() -> RawMessage:
    return RawMessage([])


def delay(seconds: float, then: Behaviour | None = None) -> Delay:
    return Delay(seconds, then)


class FakeAnthropic:
    """The fake server; use it as an async context manager, which starts and stops it."""

    def __init__(self, default: Behaviour | None = None) -> None:
        self.default = default or tool_answer("not_in_sources", "The excerpts do not say.")
        self.requests: list[RecordedRequest] = []
        self.closing = asyncio.Event()
        self._script: deque[Behaviour] = deque()
        self._runner: web.AppRunner | None = None
        self._port = 0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._port}"

    @property
    def calls(self) -> int:
        return sum(1 for r in self.requests if r.path == "/v1/messages")

    @property
    def last_body(self) -> Any:
        return self.requests[-1].body

    def enqueue(self, *behaviours: Behaviour) -> None:
        self._script.extend(behaviours)

    async def __aenter__(self) -> FakeAnthropic:
        app = web.Application()
        app.router.add_post("/v1/messages", self._messages)
        self._runner, self._port = await serve_on_loopback(app)
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.closing.set()
        if self._runner is not None:
            await self._runner.cleanup()

    async def _messages(self, request: web.Request) -> web.Response:
        text = await request.text()
        body = json.loads(text) if text else None
        headers = {k.lower(): v for k, v in request.headers.items()}
        self.requests.append(
            RecordedRequest(
                method=request.method,
                path=request.path,
                headers={k: v for k, v in headers.items() if k not in _AUTH_HEADERS},
                body=body,
                authenticated=any(k in headers for k in _AUTH_HEADERS),
            )
        )
        behaviour = self._script.popleft() if self._script else self.default
        return await behaviour.respond(self, body)


def _message(
    request: Any,
    content: list[dict[str, Any]],
    input_tokens: int,
    output_tokens: int,
    *,
    stop_reason: str = "tool_use",
) -> web.Response:
    reply = {
        "id": f"msg_fake_{next(_ids):06d}",
        "type": "message",
        "role": "assistant",
        "model": request.get("model", "claude-fake") if isinstance(request, dict) else "claude",
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": {"input_tokens": input_tokens, "output_tokens": output_tokens},
    }
    return web.json_response(reply, headers={"request-id": f"req_fake_{next(_ids):06d}"})
