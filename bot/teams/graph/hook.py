"""``POST /hooks/graph/teams``: Microsoft Graph's change notifications for the channels whose
alert posts come through Graph (``bot.teams.graph.subscriptions``).

- **Validation:** a request with a ``validationToken`` query parameter (Graph checking the URL
  when a subscription is created) is answered 200 ``text/plain`` with the token, at once and
  with nothing looked up.
- **Notifications:** the whole body is read (at most ``MAX_BODY_BYTES``, at most
  ``MAX_NOTIFICATIONS`` notifications, else 413), the subscriptions it names are looked up in one
  query, and each notification's ``clientState`` is compared in constant time with the secret
  sealed on its subscription's row. A notification that does not verify (unknown subscription,
  a channel switched off, wrong or missing ``clientState``) is counted and dropped; the request
  is still answered 202, so a sender learns nothing about which subscriptions exist. Only new
  root messages are taken (a reply's resource names ``/replies``), each queued as a
  ``teams.graph_message`` job under its own key, so Graph's redeliveries queue nothing twice.
- **Answered 202** once every notification is queued (or dropped); 503 when the database could
  not take them, so Graph delivers them again (it retries for up to four hours).
"""

from __future__ import annotations

import hmac
import json
import logging
import re
from typing import Any

import psycopg
from aiohttp import web

from bot.core.dedupe import Claim
from bot.core.jobs.queue import JobRequest
from bot.core.token_cipher import TokenCipher
from bot.server import AddRoutes
from bot.teams.bot import TeamsBot, job_tenant
from bot.teams.graph.config import GRAPH_HOOK_PATH
from bot.teams.graph.messages import GRAPH_MESSAGE
from bot.teams.graph.subscriptions import SubscriptionRow, client_state_of, subscriptions_by_id
from rag import StoreError

logger = logging.getLogger(__name__)

MAX_BODY_BYTES = 1_000_000
# Graph batches notifications, a few per request in practice; more than this is not Graph.
MAX_NOTIFICATIONS = 1000
MAX_TOKEN_CHARS = 1024
# teams('{team}')/channels('{channel}')/messages('{id}'): a root message; a reply's resource
# goes on with /replies('{id}') and does not match.
_ROOT_MESSAGE = re.compile(
    r"^/?teams\('(?P<team>[^']+)'\)/channels\('(?P<channel>[^']+)'\)"
    r"/messages\('(?P<message>[^']+)'\)$"
)


def graph_hook_routes(bot: TeamsBot, cipher: TokenCipher) -> AddRoutes:
    metrics = bot.teams_metrics.graph_notifications

    async def hook(request: web.Request) -> web.Response:
        token = request.query.get("validationToken")
        if token is not None:
            if len(token) > MAX_TOKEN_CHARS:
                raise web.HTTPBadRequest()
            # Plain text, never sniffed as HTML: the echo is whatever the caller sent.
            headers = {"X-Content-Type-Options": "nosniff"}
            return web.Response(text=token, content_type="text/plain", headers=headers)
        notifications = await _notifications(request)
        try:
            secrets = await _secrets_of(bot, cipher, notifications)
            for notification in notifications:
                outcome = await _take(bot, secrets, notification)
                metrics.labels(outcome).inc()
        except (psycopg.Error, StoreError, TimeoutError) as exc:
            logger.warning("Graph notifications not taken now (%s)", type(exc).__name__)
            raise web.HTTPServiceUnavailable() from exc
        return web.Response(status=202)

    def add_routes(app: web.Application) -> None:
        app.router.add_post(GRAPH_HOOK_PATH, hook)

    return add_routes


async def _notifications(request: web.Request) -> list[dict[str, Any]]:
    if request.content_length is not None and request.content_length > MAX_BODY_BYTES:
        raise web.HTTPRequestEntityTooLarge(
            max_size=MAX_BODY_BYTES, actual_size=request.content_length
        )
    body = await _whole_body(request)
    try:
        value = json.loads(body).get("value")
    except (ValueError, AttributeError):
        raise web.HTTPBadRequest(text="not a change notification collection") from None
    if not isinstance(value, list):
        raise web.HTTPBadRequest(text="not a change notification collection")
    if len(value) > MAX_NOTIFICATIONS:
        raise web.HTTPRequestEntityTooLarge(
            max_size=MAX_NOTIFICATIONS,
            actual_size=len(value),
            text=f"more than {MAX_NOTIFICATIONS} notifications in one request",
        )
    return [item for item in value if isinstance(item, dict)]


async def _whole_body(request: web.Request) -> bytes:
    """The body to its end (one ``read(n)`` returns only what has arrived so far), capped."""
    body = bytearray()
    async for chunk in request.content.iter_chunked(65_536):
        body += chunk
        if len(body) > MAX_BODY_BYTES:
            raise web.HTTPRequestEntityTooLarge(max_size=MAX_BODY_BYTES, actual_size=len(body))
    return bytes(body)


async def _secrets_of(
    bot: TeamsBot, cipher: TokenCipher, notifications: list[dict[str, Any]]
) -> dict[str, tuple[SubscriptionRow, str]]:
    """Each wanted subscription the notifications name, with its opened clientState: one
    lookup for the whole request, however many notifications name however many ids."""
    named = {n.get("subscriptionId") for n in notifications}
    rows = await subscriptions_by_id(bot.store, {i for i in named if isinstance(i, str)})
    found: dict[str, tuple[SubscriptionRow, str]] = {}
    for subscription_id, row in rows.items():
        secret = client_state_of(row, cipher) if row.wanted else None
        if secret is not None:
            found[subscription_id] = (row, secret)
    return found


async def _take(
    bot: TeamsBot, secrets: dict[str, tuple[SubscriptionRow, str]], notification: dict[str, Any]
) -> str:
    subscription_id, given = notification.get("subscriptionId"), notification.get("clientState")
    if not isinstance(subscription_id, str) or not isinstance(given, str):
        return "unverified"
    row, secret = secrets.get(subscription_id, (None, ""))
    # surrogatepass: JSON may carry a lone surrogate ("\\ud800"), which matches no secret.
    if row is None or not hmac.compare_digest(
        given.encode("utf-8", "surrogatepass"), secret.encode()
    ):
        logger.info("Graph notification for subscription %s not verified", subscription_id)
        return "unverified"
    found = _ROOT_MESSAGE.match(str(notification.get("resource") or ""))
    if notification.get("changeType") != "created" or found is None:
        return "reply" if "/replies(" in str(notification.get("resource")) else "other"
    if found["channel"] != row.channel_id:
        return "other"  # a notification for another channel than its subscription's
    payload = {
        "tenant": row.tenant_id,
        "aad_tenant": row.aad_tenant_id,
        "team_id": row.team_id,
        "channel_id": row.channel_id,
        "message_id": found["message"],
    }
    key = f"{GRAPH_MESSAGE}:{row.channel_id}:{found['message']}"
    job = JobRequest(GRAPH_MESSAGE, key, payload, job_tenant(payload))
    claim = await bot.intake.claim(key, job)
    if claim is Claim.REFUSED:
        raise StoreError("the database refused the claim")
    return "duplicate" if claim is Claim.DUPLICATE else "queued"
