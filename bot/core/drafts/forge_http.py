"""HTTP to a runbook destination (GitHub, GitLab, Confluence): explicit timeouts, and 429 / 5xx
retried after ``Retry-After`` (bounded), so a rate limit never ends in a second branch or PR:
each caller looks up before it creates. Redirects are not followed: every request carries the
source's token, which must not travel to wherever a redirect points; a connection the source
access rule refuses is a ``refused`` error at once, not a retried outage."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import Any

import aiohttp

from rag import address_refusal_in

logger = logging.getLogger(__name__)

ATTEMPTS = 5
MAX_WAIT_S = 30.0
TIMEOUT = aiohttp.ClientTimeout(total=20, connect=5)


class DeliveryError(Exception):
    """A draft could not be delivered. ``code``: ``read_only`` (the token may read, not write),
    ``unauthorized``, ``not_found``, ``unavailable`` (retries spent), ``refused``."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass(frozen=True)
class Reply:
    status: int
    body: Any


class ForgeHttp:
    """One API base with one credential header; ``request`` answers any status below 500 but
    429 (the caller decides what a 404 or 422 means), retrying the rest."""

    def __init__(
        self,
        session: aiohttp.ClientSession,
        base_url: str,
        headers: dict[str, str],
        *,
        sleep_cap_s: float = MAX_WAIT_S,
    ) -> None:
        self.session = session
        self.base_url = base_url.rstrip("/")
        self.headers = headers
        self.sleep_cap_s = sleep_cap_s

    async def request(
        self, method: str, path: str, *, json: Any = None, params: dict[str, str] | None = None
    ) -> Reply:
        url = f"{self.base_url}/{path.lstrip('/')}"
        for attempt in range(1, ATTEMPTS + 1):
            try:
                async with self.session.request(
                    method,
                    url,
                    json=json,
                    params=params,
                    headers=self.headers,
                    timeout=TIMEOUT,
                    allow_redirects=False,
                ) as response:
                    status = response.status
                    retry_after = response.headers.get("Retry-After")
                    body = await _body(response)
            except (aiohttp.ClientError, TimeoutError) as exc:
                refusal = address_refusal_in(exc)
                if refusal is not None:
                    raise DeliveryError("refused", f"{method} {path}: {refusal}") from exc
                if attempt == ATTEMPTS:
                    raise DeliveryError("unavailable", f"{method} {path}: unreachable") from exc
                await asyncio.sleep(min(2.0**attempt / 4, self.sleep_cap_s))
                continue
            if status == 429 or status >= 500:
                if attempt == ATTEMPTS:
                    raise DeliveryError("unavailable", f"{method} {path}: HTTP {status}")
                wait = _seconds(retry_after, default=2.0**attempt / 4)
                logger.info("%s %s: HTTP %s, retrying in %.1fs", method, path, status, wait)
                await asyncio.sleep(min(wait, self.sleep_cap_s))
                continue
            if status == 401:
                raise DeliveryError("unauthorized", "the source's token was refused")
            return Reply(status, body)
        raise AssertionError("unreachable")


async def _body(response: aiohttp.ClientResponse) -> Any:
    text = await response.text()
    try:
        return await response.json(content_type=None) if text.strip() else None
    except ValueError:
        return text


def _seconds(value: str | None, *, default: float) -> float:
    try:
        return max(0.0, float(value)) if value is not None else default
    except ValueError:
        return default


async def request_ok(
    http: ForgeHttp,
    method: str,
    path: str,
    params: dict[str, str] | None = None,
    *,
    forge: str,
    read_only: str,
) -> Reply:
    """A request the delivery needs to succeed: a 404, a 403 (the token cannot write) or any
    other refusal is a ``DeliveryError`` naming ``forge`` and the call."""
    reply = await http.request(method, path, params=params)
    if reply.status == 404:
        raise DeliveryError("not_found", f"{forge} has no {path} (or the token may not see it)")
    refuse_read_only(reply, read_only)
    if reply.status >= 300:
        raise DeliveryError("refused", f"{forge} answered HTTP {reply.status} to {method} {path}")
    return reply


def refuse_read_only(reply: Reply, message: str) -> None:
    if reply.status == 403:
        raise DeliveryError("read_only", message)
