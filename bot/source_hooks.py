"""``POST /hooks/git/{source_id}``: a push announced by GitHub or GitLab (or a page event of
Confluence Cloud) queues a sync of the source at once.

Verified with the source's own webhook secret: GitHub's ``X-Hub-Signature-256`` or Confluence's
``X-Hub-Signature`` (``sha256=`` and an HMAC-SHA256 of the raw body) or GitLab's
``X-Gitlab-Token`` (the secret itself), compared in constant time; anything else is 401. A push
to another branch (a page of another space) is acknowledged and ignored (202 with the reason).
An unknown source is a bare 404 that says nothing more. A verified body the source was sent
before (a replay, bot/core/sources/deliveries.py) is answered 200 "duplicate" and queues nothing.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import uuid
from typing import Any
from urllib.parse import parse_qs

from aiohttp import web

from bot.core.jobs.queue import JobQueue
from bot.core.sources.deliveries import delivered_before, delivery_id, remember_delivery
from bot.core.sources.jobs import queue_sync
from bot.core.sources.runs import open_secret
from bot.core.token_cipher import SecretUnreadableError, TokenCipher
from bot.server import AddRoutes
from rag import SourceRow, Store, get_source

logger = logging.getLogger(__name__)

HOOK_PATH = "/hooks/git/{source_id}"
MAX_BODY_BYTES = 5_000_000


def source_hook_routes(store: Store, jobs: JobQueue, cipher: TokenCipher | None) -> AddRoutes:
    async def hook(request: web.Request) -> web.Response:
        try:
            source_id = uuid.UUID(request.match_info["source_id"])
        except ValueError:
            raise web.HTTPNotFound() from None
        row = await get_source(store, source_id)
        if row is None:
            raise web.HTTPNotFound()
        body = await _read_body(request)
        if not _verified(row, request, body, cipher):
            logger.info("webhook for source %s refused: bad or missing signature", source_id)
            raise web.HTTPUnauthorized()
        event = request.headers.get("X-GitHub-Event") or request.headers.get("X-Gitlab-Event", "")
        if event == "ping":
            return _accepted("ignored", "ping")
        payload = _json(body, form=request.content_type == "application/x-www-form-urlencoded")
        ignored = _ignored(row, payload)
        if ignored is not None:
            return _accepted("ignored", ignored)
        delivery = delivery_id(request.headers)
        if await delivered_before(store, row.source_id, body):
            logger.info("webhook for source %s: delivery %s seen before", source_id, delivery)
            return web.json_response(
                {"status": "duplicate", "reason": "this delivery was answered before"}
            )
        # A redelivered push queues nothing twice; another commit (or page edit) queues another.
        queued = await queue_sync(
            jobs, source_id=row.source_id, tenant=row.tenant_id, key=_change_key(payload, body)
        )
        await remember_delivery(store, row.source_id, body, delivery)
        logger.info("change of source %s: sync %s", source_id, "queued" if queued else "known")
        return _accepted("queued" if queued else "duplicate", "sync queued")

    def add_routes(app: web.Application) -> None:
        app.router.add_post(HOOK_PATH, hook)

    return add_routes


async def _read_body(request: web.Request) -> bytes:
    """The whole body (a push of many commits can pass aiohttp's 1 MiB default), capped."""
    body = bytearray()
    async for chunk in request.content.iter_chunked(65_536):
        body += chunk
        if len(body) > MAX_BODY_BYTES:
            raise web.HTTPRequestEntityTooLarge(max_size=MAX_BODY_BYTES, actual_size=len(body))
    return bytes(body)


def _ignored(row: SourceRow, payload: dict[str, Any]) -> str | None:
    """Why a verified event does not concern the source (another branch or space), or None."""
    if row.kind == "confluence":
        page = payload.get("page")
        space = page.get("spaceKey") if isinstance(page, dict) else None
        wanted = str(row.settings.get("space", ""))
        return None if space in (None, wanted) else f"a page of another space than {wanted}"
    branch = str(row.settings.get("branch", "main"))
    return None if payload.get("ref") == f"refs/heads/{branch}" else f"not a push to {branch}"


def _change_key(payload: dict[str, Any], body: bytes) -> str:
    after = payload.get("after") or payload.get("checkout_sha")
    if isinstance(after, str):
        return f"push-{after}"
    return f"event-{hashlib.sha256(body).hexdigest()}"


def _verified(
    row: SourceRow, request: web.Request, body: bytes, cipher: TokenCipher | None
) -> bool:
    what = f"the webhook secret of source {row.tenant_id}/{row.name}"
    try:
        secret = str(open_secret(row.webhook_secret, cipher, what)["secret"]).encode()
    except SecretUnreadableError as exc:
        # Nothing verifies until the key is back (or the source is added again): a 401 like
        # any other unverified request, and the operator is told why.
        logger.warning("webhook for source %s refused: %s", row.source_id, exc)
        return False
    # GitHub signs with X-Hub-Signature-256, Confluence Cloud with X-Hub-Signature (sha256=…).
    signature = request.headers.get("X-Hub-Signature-256") or request.headers.get("X-Hub-Signature")
    if signature is not None:
        expected = "sha256=" + hmac.new(secret, body, hashlib.sha256).hexdigest()
        return hmac.compare_digest(_raw(signature), expected.encode())
    token = request.headers.get("X-Gitlab-Token")
    if token is not None:
        return hmac.compare_digest(_raw(token), secret)
    return False


def _raw(header: str) -> bytes:
    """A header's bytes as sent (aiohttp decodes a byte that is not UTF-8 to a surrogate)."""
    try:
        return header.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a surrogate that stands for no byte: matches no signature
        return b""


def _json(body: bytes, *, form: bool) -> dict[str, Any]:
    """The push event; GitHub sends it as a ``payload`` form field when so configured."""
    try:
        if form:
            body = parse_qs(body.decode(), strict_parsing=True)["payload"][0].encode()
        payload = json.loads(body)
    except (ValueError, KeyError, UnicodeDecodeError):
        raise web.HTTPBadRequest(text="the body is not JSON") from None
    if not isinstance(payload, dict):
        raise web.HTTPBadRequest(text="the body is not a JSON object")
    return payload


def _accepted(status: str, reason: str) -> web.Response:
    return web.json_response({"status": status, "reason": reason}, status=202)
