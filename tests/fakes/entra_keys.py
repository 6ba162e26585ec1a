"""Signed test tokens and the key endpoint that verifies them, on 127.0.0.1.

    async with TokenIssuer() as issuer:
        settings.teams_jwks_url = issuer.jwks_url
        token = issuer.token(audience=APP_ID)          # RS256, kid set, Bot Framework issuer

An RSA key made for the test run signs tokens shaped like the Bot Connector's; ``/keys``
serves its public half as a JWKS document, as login.botframework.com does.
"""

from __future__ import annotations

import json
import time
from types import TracebackType
from typing import Any

import jwt
from aiohttp import web
from cryptography.hazmat.primitives.asymmetric import rsa

from tests.fakes.loopback import serve_on_loopback

BOT_FRAMEWORK_ISSUER = "https://api.botframework.com"
KEY_ID = "test-key-1"


class TokenIssuer:
    def __init__(self) -> None:
        self._key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self._runner: web.AppRunner | None = None
        self.jwks_url = ""
        self.key_requests = 0
        self.failing = False  # set to make /keys answer 503, as an endpoint outage would

    async def __aenter__(self) -> TokenIssuer:
        public = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(self._key.public_key()))
        document = {"keys": [{**public, "kid": KEY_ID, "use": "sig", "alg": "RS256"}]}

        async def keys(request: web.Request) -> web.Response:
            self.key_requests += 1
            if self.failing:
                return web.json_response({"error": "unavailable"}, status=503)
            return web.json_response(document)

        app = web.Application()
        app.router.add_get("/keys", keys)
        self._runner, port = await serve_on_loopback(app)
        self.jwks_url = f"http://127.0.0.1:{port}/keys"
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    def token(
        self,
        *,
        audience: str,
        issuer: str = BOT_FRAMEWORK_ISSUER,
        service_url: str | None = None,
        kid: str | None = KEY_ID,
        expires_in: int = 3600,
        **claims: Any,
    ) -> str:
        now = int(time.time())
        payload = {
            "iss": issuer,
            "aud": audience,
            "nbf": now - 60,
            "iat": now - 60,
            "exp": now + expires_in,
            **({"serviceurl": service_url} if service_url else {}),
            **claims,
        }
        headers = {"kid": kid} if kid else {}
        return jwt.encode(payload, self._key, algorithm="RS256", headers=headers)
