"""One JSON request to a Confluence site: credentials, timeouts, throttling and error translation.

A 429 (and a 502/503/504) is retried after its ``Retry-After`` — a bounded number of times, each
wait capped — and every failure becomes one ``ConfluenceError`` naming the space and the site.
Redirects are not followed: the credential must never be sent to an address the user did not give.
An error says what kind of failure and which HTTP status, never what the answer's body said: the
message is stored as the source's last error, which every user of the tenant may read, and the
body of an internal service that answered by mistake may hold anything.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import email.utils
import json
import logging
from collections.abc import Awaitable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import urlsplit

import aiohttp

from rag.errors import (
    ConfluenceAuthError,
    ConfluenceNotFoundError,
    ConfluenceRefusedError,
    ConfluenceResponseError,
    ConfluenceUnreachableError,
)
from rag.sources.confluence.space import ConfluenceSpace
from rag.sources.connector import address_refusal_in

logger = logging.getLogger(__name__)

REQUEST_TIMEOUT = aiohttp.ClientTimeout(total=60, connect=10, sock_read=30)
_RETRY_STATUSES = frozenset({429, 502, 503, 504})
MAX_ANSWER_BYTES = 32 * 1024 * 1024
_T = TypeVar("_T")
_E = TypeVar(
    "_E",
    ConfluenceAuthError,
    ConfluenceNotFoundError,
    ConfluenceRefusedError,
    ConfluenceUnreachableError,
)


@dataclass(frozen=True)
class RetryPolicy:
    """How long to keep asking a throttled or briefly failing site before giving up."""

    attempts: int = 6
    max_wait_s: float = 30.0
    # A dropped connection is retried less: a host that is down stays down for a while.
    transport_attempts: int = 2
    transport_wait_s: float = 0.5


class ConfluenceConnection:
    """Requests to one space's site with its credential, on the caller's ``ClientSession``."""

    def __init__(
        self,
        session: aiohttp.ClientSession,
        space: ConfluenceSpace,
        *,
        retry: RetryPolicy | None = None,
        timeout: aiohttp.ClientTimeout = REQUEST_TIMEOUT,
        max_answer_bytes: int = MAX_ANSWER_BYTES,
    ) -> None:
        self.session = session
        self.space = space
        self._retry = retry or RetryPolicy()
        self._timeout = timeout
        self._max_answer_bytes = max_answer_bytes
        self._headers = {
            "Authorization": space.auth.authorization(),
            "Accept": "application/json",
        }

    async def get(
        self, url: str, params: Mapping[str, str] | None = None, *, subject: str
    ) -> dict[str, Any]:
        """GET ``url`` and return its JSON object; ``subject`` ("page 42") names it in errors."""
        return await self._request("GET", url, params=params, body=None, subject=subject)

    async def post(self, url: str, body: Mapping[str, Any], *, subject: str) -> dict[str, Any]:
        return await self._request("POST", url, params=None, body=body, subject=subject)

    async def _request(
        self,
        method: str,
        url: str,
        *,
        params: Mapping[str, str] | None,
        body: Mapping[str, Any] | None,
        subject: str,
    ) -> dict[str, Any]:
        policy = self._retry
        attempt = transport_failures = 0
        while True:
            attempt += 1
            try:
                async with self.session.request(
                    method,
                    url,
                    params=params,
                    json=body,
                    headers=self._headers,
                    timeout=self._timeout,
                    allow_redirects=False,
                ) as response:
                    status = response.status
                    if status in _RETRY_STATUSES and attempt < policy.attempts:
                        wait = _retry_after(response.headers.get("Retry-After"), attempt)
                        logger.info(
                            "confluence %s answered %d; retry %d in %.1fs",
                            self.space.space_key, status, attempt, min(wait, policy.max_wait_s),
                        )  # fmt: skip
                        await asyncio.sleep(min(wait, policy.max_wait_s))
                        continue
                    text = await self._read(response, subject)
                    location = response.headers.get("Location", "")
            except (aiohttp.ClientConnectionError, TimeoutError) as exc:
                refusal = address_refusal_in(exc)
                if refusal is not None:
                    raise self._error(ConfluenceRefusedError, refusal) from None
                transport_failures += 1
                if transport_failures < policy.transport_attempts:
                    await asyncio.sleep(policy.transport_wait_s)
                    continue
                reason = "timed out" if isinstance(exc, TimeoutError) else "cannot connect"
                raise self._error(
                    ConfluenceUnreachableError, f"{reason} reading {subject} ({type(exc).__name__})"
                ) from exc
            return self._decode(status, text, location, subject)

    async def _read(self, response: aiohttp.ClientResponse, subject: str) -> str:
        """The answer's text, refused past the cap (a page of 300 KB is far below it)."""
        body = bytearray()
        async for chunk in response.content.iter_chunked(1 << 16):
            body += chunk
            if len(body) > self._max_answer_bytes:
                raise ConfluenceResponseError(
                    f"the answer for {subject} is over {self._max_answer_bytes} bytes",
                    space_key=self.space.space_key,
                    base_url=self.space.base_url,
                    status=response.status,
                )
        return body.decode("utf-8", errors="replace")

    def _decode(self, status: int, text: str, location: str, subject: str) -> dict[str, Any]:
        if status in (401, 403):
            verb = "refused" if status == 401 else "does not let its account read"
            raise self._error(
                ConfluenceAuthError,
                f"the site {verb} {subject} (HTTP {status}); check "
                f"{self.space.auth.credential_name} and its access to the space",
            )
        if status == 404:
            raise self._error(ConfluenceNotFoundError, f"{subject} not found (HTTP 404)")
        if status in _RETRY_STATUSES:
            raise self._error(
                ConfluenceUnreachableError,
                f"still HTTP {status} for {subject} after {self._retry.attempts} tries",
            )
        if 300 <= status < 400:
            target = urlsplit(location)
            raise ConfluenceResponseError(
                f"{subject} redirected to {target.scheme}://{target.netloc}{target.path}; "
                "use the address Confluence is served at as the base URL",
                space_key=self.space.space_key,
                base_url=self.space.base_url,
                status=status,
            )
        if status != 200:
            raise ConfluenceResponseError(
                f"HTTP {status} for {subject}",
                space_key=self.space.space_key,
                base_url=self.space.base_url,
                status=status,
            )
        try:
            payload = json.loads(text)
        except ValueError:
            payload = None
        if not isinstance(payload, dict):
            raise ConfluenceResponseError(
                f"{subject}: the answer is not a JSON object; is the base URL right?",
                space_key=self.space.space_key,
                base_url=self.space.base_url,
                status=status,
            )
        return payload

    def _error(self, kind: type[_E], message: str) -> _E:
        return kind(message, space_key=self.space.space_key, base_url=self.space.base_url)


async def concurrently(*steps: Awaitable[_T]) -> list[_T]:
    """Await the steps together; the first failure cancels the others and is raised as itself
    (no request is left running after the caller has its answer)."""
    try:
        async with asyncio.TaskGroup() as group:
            tasks = [group.create_task(_run(step)) for step in steps]
    except ExceptionGroup as failed:
        raise first_failure(failed) from None
    return [task.result() for task in tasks]


def first_failure(failed: BaseExceptionGroup[Exception]) -> Exception:
    """The first error in a task group's failure, the one a caller catches by its own class."""
    first = failed.exceptions[0]
    return first_failure(first) if isinstance(first, BaseExceptionGroup) else first


async def _run(step: Awaitable[_T]) -> _T:
    return await step


def _retry_after(value: str | None, attempt: int) -> float:
    """Seconds to wait: ``Retry-After`` as seconds or an HTTP date, else exponential back-off."""
    if value:
        value = value.strip()
        if value.isdigit():
            return float(value)
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            when = None
        if when is not None and when.tzinfo is not None:
            return max(0.0, (when - dt.datetime.now(dt.UTC)).total_seconds())
    return float(2 ** (attempt - 1))
