"""Inbound authentication of ``/api/messages``: the Agents SDK's JWT validation, answered as 401.

The SDK's own route decorator lets some validation errors escape as a 500 (a JWT without
``kid``); here every token problem is a 401. Issuer validation is on. Signing keys come from
the endpoint the token's issuer names (or ``TEAMS_JWKS_URL``), fetched asynchronously and
cached. When the endpoint fails, cached keys keep verifying for a grace period past their TTL;
a token that cannot be checked at all (no usable keys) is a 503, which the Bot Framework
retries, never a request run unauthenticated; in the local mode, which nothing retries, it is
a 401.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass
from typing import Any

import aiohttp
import jwt
from aiohttp import web
from microsoft_agents.hosting.core import AgentAuthConfiguration, ClaimsIdentity
from microsoft_agents.hosting.core.authorization import AuthTypes
from microsoft_agents.hosting.core.authorization.jwt import JwtTokenValidator

from rag import Settings

logger = logging.getLogger(__name__)

KEYS_TIMEOUT_S = 5.0
# An unknown kid may mean the keys rotated; refetch, but not on every forged token. After a
# failed fetch, wait before trying again, so a burst of requests doesn't queue on a dead endpoint.
KEYS_REFRESH_MIN_S = 60.0
KEYS_RETRY_AFTER_FAILURE_S = 30.0


class SigningKeyUnavailable(Exception):
    """The key endpoint could not be read, so no token can be verified right now."""


@dataclass
class _CachedKeys:
    fetched_at: float
    keys: dict[str, dict[str, Any]]


class SigningKeys:
    """Public keys by ``kid`` per JWKS URL; the shape the SDK validator asks keys from.

    Keys older than ``ttl_s`` are refetched; if that fails they are still served until
    ``ttl_s + grace_s``, so an outage of the key endpoint does not refuse every request.
    """

    def __init__(
        self, *, override_url: str | None = None, ttl_s: float = 3600.0, grace_s: float = 86400.0
    ) -> None:
        self._override_url = override_url
        self._ttl_s = ttl_s
        self._grace_s = grace_s
        self._cached: dict[str, _CachedKeys] = {}
        self._failed_at: dict[str, float] = {}
        self._lock = asyncio.Lock()

    async def get_signing_key(self, jwks_uri: str, header: dict[str, Any]) -> jwt.PyJWK:
        kid = header.get("kid")
        if not isinstance(kid, str) or not kid:
            raise ValueError("token header has no key id")
        if header.get("alg") != "RS256":
            raise ValueError("token not signed with RS256")
        url = self._override_url or jwks_uri
        keys, current = await self._current(url, refresh_for=kid)
        if kid not in keys:
            if not current:
                # Perhaps a rotated key we could not fetch: unverifiable now, not forged.
                raise SigningKeyUnavailable("token signed with a key not in the stale cache")
            raise ValueError("token signed with an unknown key")
        return jwt.PyJWK(keys[kid], algorithm="RS256")

    async def _current(
        self, url: str, *, refresh_for: str
    ) -> tuple[dict[str, dict[str, Any]], bool]:
        """The keys to verify with, and whether they are current: False when a refresh they
        needed failed and the cache stood in."""
        async with self._lock:
            cached = self._cached.get(url)
            age = time.monotonic() - cached.fetched_at if cached else float("inf")
            unknown_kid = cached is not None and refresh_for not in cached.keys
            if cached is not None and not (
                age > self._ttl_s or (unknown_kid and age > KEYS_REFRESH_MIN_S)
            ):
                return cached.keys, True
            try:
                if time.monotonic() - self._failed_at.get(url, -1e9) < KEYS_RETRY_AFTER_FAILURE_S:
                    raise SigningKeyUnavailable("signing keys unavailable (recent failure)")
                try:
                    keys = await _fetch_keys(url)
                except SigningKeyUnavailable:
                    self._failed_at[url] = time.monotonic()
                    raise
            except SigningKeyUnavailable:
                if cached is None or age > self._ttl_s + self._grace_s:
                    raise
                logger.warning("signing key refresh failed; using keys %.0f s old", age)
                return cached.keys, False
            self._cached[url] = _CachedKeys(time.monotonic(), keys)
            return keys, True


async def _fetch_keys(url: str) -> dict[str, dict[str, Any]]:
    timeout = aiohttp.ClientTimeout(total=KEYS_TIMEOUT_S)
    try:
        async with (
            aiohttp.ClientSession(timeout=timeout) as session,
            session.get(url) as response,
        ):
            response.raise_for_status()
            document = await response.json(content_type=None)
    except (aiohttp.ClientError, TimeoutError, ValueError) as exc:
        raise SigningKeyUnavailable(f"signing keys unavailable: {type(exc).__name__}") from exc
    entries = document.get("keys") if isinstance(document, dict) else None
    if not isinstance(entries, list):
        raise SigningKeyUnavailable("signing key document has no keys")
    return {k["kid"]: k for k in entries if isinstance(k, dict) and isinstance(k.get("kid"), str)}


def auth_configuration(settings: Settings, *, local: bool) -> AgentAuthConfiguration:
    """The bot's identity; issuer validation on, anonymous only in the local mode."""
    secret = settings.teams_app_password
    return AgentAuthConfiguration(
        auth_type=AuthTypes.client_secret,
        client_id=settings.teams_app_id,
        tenant_id=settings.teams_tenant_id,
        client_secret=secret.get_secret_value() if secret is not None else None,
        anonymous_allowed=local,
        validate_issuer=True,
    )


class RequestAuthorizer:
    """``authorize(request)``: the claims to run the turn with, or the 401/503 to answer."""

    def __init__(self, configuration: AgentAuthConfiguration, keys: SigningKeys) -> None:
        self._local = configuration.ANONYMOUS_ALLOWED
        self._validator = JwtTokenValidator(configuration)
        # The SDK fetches keys synchronously in a thread from a hard-coded endpoint; its
        # validator asks this one attribute for keys (pinned SDK version: see pyproject).
        self._validator._jwk_client_manager = keys  # type: ignore[assignment]

    async def authorize(self, request: web.Request) -> ClaimsIdentity | web.Response:
        header = request.headers.get("Authorization")
        if header is None:
            if self._local:
                return ClaimsIdentity({}, None)
            return _refused("Authorization header not found")
        scheme, _, token = header.strip().partition(" ")
        token = token.strip()
        if scheme.lower() != "bearer" or not token or any(c.isspace() for c in token):
            return _refused("Invalid authorization header format")
        try:
            claims = await self._validator.validate_token(token)
        except SigningKeyUnavailable as exc:
            logger.warning("Teams token not checked, no signing keys: %s", exc)
            if self._local:
                # Nothing retries in the local mode (no Bot Framework in front of it), and a
                # token it cannot check is not one it may take: refused like any bad token.
                return _refused("Invalid token or authentication failed.")
            # Not the sender's fault: a 5xx makes the Bot Framework deliver it again.
            return web.json_response(
                {"error": "Signing keys unavailable; try again."},
                status=503,
                headers={"Retry-After": str(int(KEYS_RETRY_AFTER_FAILURE_S))},
            )
        except (jwt.PyJWTError, ValueError, KeyError, TypeError, AttributeError) as exc:
            # The exception text can quote claims; its type is enough to diagnose.
            logger.info("Teams token refused: %s", type(exc).__name__)
            return _refused("Invalid token or authentication failed.")
        if self._local:
            # Checked, but the local mode still sends outbound calls without a token.
            return ClaimsIdentity({}, None)
        return claims


def _refused(message: str) -> web.Response:
    return web.json_response({"error": message}, status=401)
