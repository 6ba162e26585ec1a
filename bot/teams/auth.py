"""Inbound authentication of ``/api/messages``: the Agents SDK's JWT validation, answered as 401.

The SDK's own route decorator lets some validation errors escape as a 500 (a JWT without
``kid``); here every token problem is a 401. Issuer validation is on. Signing keys come from
the endpoint the token's issuer names (or ``TEAMS_JWKS_URL``), fetched asynchronously and
cached. A token that cannot be checked (keys unreachable) is refused like a bad one: 401,
never a request run unauthenticated.
"""

from __future__ import annotations

import asyncio
import logging
import time
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
KEYS_TTL_S = 3600.0
# An unknown kid may mean the keys rotated; refetch, but not on every forged token. After a
# failed fetch, wait before trying again, so a burst of requests doesn't queue on a dead endpoint.
KEYS_REFRESH_MIN_S = 60.0
KEYS_RETRY_AFTER_FAILURE_S = 30.0


class SigningKeyUnavailable(Exception):
    """The key endpoint could not be read, so no token can be verified right now."""


class SigningKeys:
    """Public keys by ``kid`` per JWKS URL; the shape the SDK validator asks keys from."""

    def __init__(self, *, override_url: str | None = None) -> None:
        self._override_url = override_url
        self._keys: dict[str, tuple[float, dict[str, dict[str, Any]]]] = {}
        self._failed_at: dict[str, float] = {}
        self._lock = asyncio.Lock()

    async def get_signing_key(self, jwks_uri: str, header: dict[str, Any]) -> jwt.PyJWK:
        kid = header.get("kid")
        if not isinstance(kid, str) or not kid:
            raise ValueError("token header has no key id")
        if header.get("alg") != "RS256":
            raise ValueError("token not signed with RS256")
        url = self._override_url or jwks_uri
        keys = await self._current(url, refresh_for=kid)
        if kid not in keys:
            raise ValueError("token signed with an unknown key")
        return jwt.PyJWK(keys[kid], algorithm="RS256")

    async def _current(self, url: str, *, refresh_for: str) -> dict[str, dict[str, Any]]:
        async with self._lock:
            fetched_at, keys = self._keys.get(url, (0.0, {}))
            age = time.monotonic() - fetched_at
            if age > KEYS_TTL_S or (refresh_for not in keys and age > KEYS_REFRESH_MIN_S):
                if time.monotonic() - self._failed_at.get(url, -1e9) < KEYS_RETRY_AFTER_FAILURE_S:
                    raise SigningKeyUnavailable("signing keys unavailable (recent failure)")
                try:
                    keys = await _fetch_keys(url)
                except SigningKeyUnavailable:
                    self._failed_at[url] = time.monotonic()
                    raise
                self._keys[url] = (time.monotonic(), keys)
            return keys


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
            logger.warning("Teams token refused, it cannot be verified: %s", exc)
            return _refused("Invalid token or authentication failed.")
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
