"""Who may talk to /api/messages: production security and the local mode, over real HTTP.

Tokens are signed with a test RSA key whose public half a fake key endpoint serves; every bad
token is a 401 (never a 500) and causes no connector call; only /api/messages checks tokens.
"""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

import aiohttp
import jwt
import pytest
import pytest_asyncio

from bot.teams.tenancy import add_teams_tenant
from rag import IngestReport, RagService, Settings, Store
from tests.fakes.bot_connector import FakeBotConnector
from tests.fakes.entra_keys import TokenIssuer
from tests.teams_harness import (
    APP_ID,
    ServedTeams,
    feedback_value,
    invoke,
    mention,
    new_aad_tenant,
    served_teams,
    teams_settings,
)

QUESTION = "how do I fail over the payments database?"


@dataclass
class Server:
    served: ServedTeams
    connector: FakeBotConnector
    issuer: TokenIssuer
    aad_tenant: str

    def message(self) -> dict[str, Any]:
        return mention(QUESTION, service_url=self.connector.service_url, aad_tenant=self.aad_tenant)

    def signed(self, **overrides: Any) -> str:
        claims: dict[str, Any] = {"audience": APP_ID, "service_url": self.connector.service_url}
        return self.issuer.token(**{**claims, **overrides})


async def _server(
    settings: Settings,
    service: RagService,
    store: Store,
    *,
    local: bool,
    keys_failing: bool = False,
) -> AsyncIterator[Server]:
    async with FakeBotConnector() as connector, TokenIssuer() as issuer:
        issuer.failing = keys_failing
        configured = teams_settings(settings, jwks_url=issuer.jwks_url, local=local)
        async with served_teams(settings=configured, service=service, store=store) as served:
            aad = new_aad_tenant()
            await add_teams_tenant(store, aad, "acme")
            yield Server(served, connector, issuer, aad)


@pytest_asyncio.fixture(loop_scope="session")
async def production(
    settings: Settings, service: RagService, store: Store, acme_corpus: IngestReport
) -> AsyncIterator[Server]:
    async for server in _server(settings, service, store, local=False):
        yield server


@pytest_asyncio.fixture(loop_scope="session")
async def local(
    settings: Settings, service: RagService, store: Store, acme_corpus: IngestReport
) -> AsyncIterator[Server]:
    async for server in _server(settings, service, store, local=True):
        yield server


def _unsigned(claims: dict[str, Any], alg: str) -> str:
    def part(data: dict[str, Any]) -> str:
        return base64.urlsafe_b64encode(json.dumps(data).encode()).rstrip(b"=").decode()

    return f"{part({'alg': alg, 'typ': 'JWT', 'kid': 'test-key-1'})}.{part(claims)}."


BAD_TOKENS: dict[str, Callable[[Server], str]] = {
    "wrong audience": lambda s: s.signed(audience="00000000-0000-4000-8000-000000000000"),
    "wrong issuer": lambda s: s.signed(issuer="https://evil.example"),
    "no kid": lambda s: s.signed(kid=None),
    "unknown kid": lambda s: s.signed(kid="someone-elses-key"),
    "expired": lambda s: s.signed(expires_in=-3600),
    "garbage": lambda s: "garbage",
    "alg none": lambda s: _unsigned({"iss": "https://api.botframework.com", "aud": APP_ID}, "none"),
    "HS256 with a made-up key": lambda s: jwt.encode(
        {"iss": "https://api.botframework.com", "aud": APP_ID},
        "made-up-key-made-up-key-made-up-key",
        algorithm="HS256",
        headers={"kid": "test-key-1"},
    ),
}


@pytest.mark.parametrize("name", sorted(BAD_TOKENS))
async def test_a_bad_token_is_a_401_in_production_and_in_local_mode(
    production: Server, local: Server, name: str
) -> None:
    for server in (production, local):
        status, body, _ = await server.served.send(server.message(), token=BAD_TOKENS[name](server))
        assert (status, json.loads(body)) == (
            401,
            {"error": "Invalid token or authentication failed."},
        )
        assert server.connector.calls == []


async def test_production_refuses_requests_without_a_token(production: Server) -> None:
    click = invoke(
        "adaptiveCard/action",
        feedback_value("x", "up"),
        service_url=production.connector.service_url,
        aad_tenant=production.aad_tenant,
        conversation_id="19:c@thread.tacv2;messageid=1",
    )
    for activity in (production.message(), click):
        status, _, _ = await production.served.send(activity)
        assert status == 401
    for header in ("Basic dXNlcjpwYXNz", "Bearer", "Bearer a b"):
        status, _, _ = await production.served.send(production.message(), header=header)
        assert status == 401
    assert production.connector.calls == []


async def test_production_refuses_a_loopback_service_url_even_with_a_valid_token(
    production: Server,
) -> None:
    """The outbound service-URL validator: only https Microsoft connector hosts."""
    status, _, _ = await production.served.send(production.message(), token=production.signed())
    assert status == 401
    assert production.connector.calls == []


async def test_local_mode_takes_a_valid_signed_token_and_header_less_requests(
    local: Server,
) -> None:
    signed, header_less = local.message(), local.message()
    assert (await local.served.send(signed, token=local.signed()))[0] == 202
    assert (await local.served.send(header_less))[0] == 202
    for activity in (signed, header_less):
        [_] = await local.connector.wait_for_messages(activity["conversation"]["id"], 1)
    assert local.issuer.key_requests == 1, "signing keys are cached"


async def test_the_token_check_guards_api_messages_only(production: Server) -> None:
    # /healthz lives on the internal port; on the public one an unknown path is a plain 404,
    # not a 401: the JWT middleware is mounted on /api/messages alone.
    async with (
        aiohttp.ClientSession() as session,
        session.get(production.served.url + "/healthz") as r,
    ):
        assert r.status == 404


async def test_cached_signing_keys_outlive_a_failing_key_endpoint_for_the_grace_period_only(
    settings: Settings, service: RagService, store: Store, acme_corpus: IngestReport
) -> None:
    tuned = settings.model_copy(update={"teams_keys_ttl_s": 0.2, "teams_keys_grace_s": 2.0})
    async for server in _server(tuned, service, store, local=True):
        assert (await server.served.send(server.message(), token=server.signed()))[0] == 202
        server.issuer.failing = True
        await asyncio.sleep(0.5)  # past the TTL: the next request refetches, and that fails
        status, _, _ = await server.served.send(server.message(), token=server.signed())
        assert status == 202, "the cached keys still verify the token"
        assert server.issuer.key_requests == 2
        await asyncio.sleep(2.0)  # past the grace period too: nothing to verify with
        status, _, _ = await server.served.send(server.message(), token=server.signed())
        assert status == 401, "the local mode takes no token it cannot check (nothing retries)"
        await server.served.tasks.drain(10)


async def test_a_token_is_a_503_in_production_while_no_signing_keys_can_be_fetched(
    settings: Settings, service: RagService, store: Store, acme_corpus: IngestReport
) -> None:
    async for server in _server(settings, service, store, local=False, keys_failing=True):
        status, _, _ = await server.served.send(server.message(), token=server.signed())
        assert status == 503
        assert server.connector.calls == []


async def test_a_token_is_a_401_in_local_mode_while_no_signing_keys_can_be_fetched(
    settings: Settings, service: RagService, store: Store, acme_corpus: IngestReport
) -> None:
    """The probe's forged RS256 token in a sandbox with no key endpoint: refused, not retried."""
    async for server in _server(settings, service, store, local=True, keys_failing=True):
        status, _, _ = await server.served.send(server.message(), token=server.signed())
        assert status == 401
        assert server.connector.calls == []
