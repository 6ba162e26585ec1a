"""A serving process calls Slack over kept-alive connections: one session for the app's client
and for every job's client, instead of a new connection per Web API call."""

from __future__ import annotations

from typing import Any

from slack_bolt.async_app import AsyncBoltContext
from slack_bolt.authorization import AuthorizeResult
from slack_bolt.authorization.async_authorize import AsyncAuthorize
from slack_sdk.web.async_client import AsyncWebClient

from bot.slack.delivery.clients import SlackClients, web_api_session
from tests.fakes.slack_api import FakeSlack


class _OneInstallation(AsyncAuthorize):
    """Every workspace installed with the same bot token (as an OAuth store would find it)."""

    def __init__(self) -> None:
        super().__init__()  # type: ignore[no-untyped-call]

    async def __call__(
        self,
        *,
        context: AsyncBoltContext,
        enterprise_id: str | None,
        team_id: str | None,
        user_id: str | None,
        **_: Any,
    ) -> AuthorizeResult:
        return AuthorizeResult(
            enterprise_id=enterprise_id, team_id=team_id, bot_token="xoxb-T_ACME-oauth"
        )


async def test_web_api_calls_through_the_session_share_one_connection() -> None:
    async with FakeSlack() as slack, web_api_session(10) as session:
        client = AsyncWebClient(token="xoxb-T_ACME-one", base_url=slack.base_url, session=session)
        for n in range(3):
            await client.chat_postMessage(channel="C1", text=f"answer {n}")
    assert len(slack.calls) == 3
    assert len({call.client_port for call in slack.calls}) == 1


async def test_a_jobs_installation_client_calls_through_the_apps_session() -> None:
    async with FakeSlack() as slack, web_api_session(10) as session:
        app_client = AsyncWebClient(base_url=slack.base_url, session=session)
        clients = SlackClients(app_client, _OneInstallation())
        body = {"team_id": "T_ACME", "event": {"type": "app_mention", "user": "U1"}}
        first = await clients.for_request(body)
        second = await clients.for_request(body)
        assert first is not None and second is not None
        await first.chat_postMessage(channel="C1", text="one")
        await second.chat_postMessage(channel="C1", text="two")
    assert [call.token for call in slack.calls] == ["xoxb-T_ACME-oauth"] * 2
    assert len({call.client_port for call in slack.calls}) == 1
