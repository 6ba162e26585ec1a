"""Owner notes are sent per origin: a Slack workspace's notes with that workspace's bot (an
org-wide install's for a workspace of the org) and only inside its own tenant, Teams votes
through the Bot Connector beside Slack ones in one batch.
Over a fake Slack Web API and a fake Bot Connector, with the session database."""

from __future__ import annotations

import json
import uuid
from typing import Any

from cryptography.fernet import Fernet
from pydantic import SecretStr
from slack_sdk.oauth.installation_store import Installation
from slack_sdk.web.async_client import AsyncWebClient

from bot.core.owners.feedback_reasons import record_reason
from bot.core.owners.queue import (
    CitedQuote,
    OwnerMessenger,
    flush_owner_notes,
    queue_owner_notes,
)
from bot.core.owners.runbook_owners import Surface, set_default_owner
from bot.core.token_cipher import TokenCipher
from bot.slack.oauth_stores import PostgresInstallationStore
from bot.slack.owner_messages import SlackOwnerMessenger
from bot.teams.owner_messages import TeamsOwnerMessenger
from bot.teams.tenancy import add_teams_tenant
from rag import RagService, Settings, Store, add_workspace
from tests.adaptive_cards import card_of, card_problems
from tests.fakes.bot_connector import FakeBotConnector
from tests.fakes.slack_api import FakeSlack
from tests.gap_fixtures import evidence, plant
from tests.teams_harness import new_aad_tenant, served_teams, teams_settings

RUNBOOK = "database/primary-failover"
TEAMS_OWNERS = "19:runbook-owners@thread.tacv2"


def _new_team() -> str:
    return f"T{uuid.uuid4().hex[:10].upper()}"


async def _queue(
    store: Store,
    tenant: str,
    question: str,
    *,
    team_id: str,
    enterprise_id: str = "",
    **origin: Any,
) -> None:
    """A stored answer, a 👎 with a reason on it, and its owner note: what each surface does."""
    answer_id = await plant(store, tenant, question, answered=True, documents=[evidence(RUNBOOK)])
    assert await record_reason(
        store, tenant, answer_id, "U_VOTER", reason="outdated", comment=None, documents=[RUNBOOK]
    )
    await queue_owner_notes(
        store,
        tenant,
        answer_id,
        "U_VOTER",
        reason="outdated",
        comment=None,
        question=question,
        cited=[CitedQuote(RUNBOOK, "Promote a replica with patronictl failover.")],
        permalink=None,
        team_id=team_id,
        enterprise_id=enterprise_id,
        **origin,
    )


async def _outcomes(store: Store, tenant: str) -> list[tuple[str, str | None]]:
    async with store.pool.connection() as conn:
        cur = await conn.execute(
            "SELECT surface, outcome FROM owner_notifications WHERE tenant_id = %s "
            "ORDER BY surface",
            (tenant,),
        )
        return [(row[0], row[1]) for row in await cur.fetchall()]


async def test_with_one_bot_token_another_tenants_note_is_never_posted_into_this_workspace(
    store: Store,
) -> None:
    tenant_a, tenant_b = f"a-{uuid.uuid4().hex[:10]}", f"b-{uuid.uuid4().hex[:10]}"
    team_a, team_b = _new_team(), _new_team()
    await add_workspace(store, team_a, tenant_a)
    await add_workspace(store, team_b, tenant_b)
    for tenant in (tenant_a, tenant_b):
        await set_default_owner(store, tenant, "#sre")  # each workspace has its own #sre
    await _queue(store, tenant_a, "A asks how to fail over", team_id=team_a)
    await _queue(store, tenant_b, "B's private question about its ledger", team_id=team_b)

    async with FakeSlack() as slack:
        # The one bot token belongs to workspace A.
        client = AsyncWebClient(token=f"xoxb-{team_a}-single", base_url=slack.base_url)
        messenger = SlackOwnerMessenger(
            store=store, client=client, installations=None, api_url=slack.base_url
        )
        await flush_owner_notes(store, {"slack": messenger}, batch_minutes=60)
        posted = [json.dumps(c.body) for c in slack.calls_to("chat.postMessage")]

    assert len([p for p in posted if "A asks how to fail over" in p]) == 1
    assert not [p for p in posted if "ledger" in p], "B's note went into A's #sre"
    assert await _outcomes(store, tenant_a) == [("slack", "sent")]
    assert await _outcomes(store, tenant_b) == [("slack", "failed:not_installed")]


async def test_a_teams_vote_and_a_slack_vote_in_one_batch_are_both_delivered(
    settings: Settings, service: RagService, store: Store
) -> None:
    tenant, team, aad = f"t-{uuid.uuid4().hex[:10]}", _new_team(), new_aad_tenant()
    await add_workspace(store, team, tenant)
    await add_teams_tenant(store, aad, tenant)
    await set_default_owner(store, tenant, "#runbook-owners")
    await set_default_owner(store, tenant, TEAMS_OWNERS)

    async with FakeSlack() as slack, FakeBotConnector() as connector:
        await _queue(store, tenant, "asked in Slack: promote by hand?", team_id=team)
        await _queue(
            store,
            tenant,
            "asked in Teams: promote by hand?",
            team_id=aad,
            surface="teams",
            service_url=connector.service_url,
        )
        local = teams_settings(settings, jwks_url="http://127.0.0.1:9/keys", local=True)
        async with served_teams(settings=local, service=service, store=store) as served:
            client = AsyncWebClient(token=f"xoxb-{team}-owners", base_url=slack.base_url)
            messengers: dict[Surface, OwnerMessenger] = {
                "slack": SlackOwnerMessenger(
                    store=store, client=client, installations=None, api_url=slack.base_url
                ),
                "teams": TeamsOwnerMessenger(served.app.bot),
            }
            await flush_owner_notes(store, messengers, batch_minutes=60)

        [slack_post] = [
            c for c in slack.calls_to("chat.postMessage") if c.body["channel"] == "#runbook-owners"
        ]
        assert "asked in Slack" in json.dumps(slack_post.body)
        assert "asked in Teams" not in json.dumps(slack_post.body)
        [teams_post] = connector.live_messages(TEAMS_OWNERS)
        card = card_of(teams_post.final)
        assert card_problems(card) == []
        assert "asked in Teams" in json.dumps(card) and "asked in Slack" not in json.dumps(card)
    assert await _outcomes(store, tenant) == [("slack", "sent"), ("teams", "sent")]


async def test_a_note_from_a_workspace_of_an_org_wide_install_is_sent_with_the_org_bot(
    store: Store,
) -> None:
    tenant, team, enterprise = f"t-{uuid.uuid4().hex[:10]}", _new_team(), f"E{uuid.uuid4().hex[:8]}"
    await add_workspace(store, team, tenant, enterprise_id=enterprise)
    await set_default_owner(store, tenant, "#sre")
    await _queue(
        store, tenant, "asked in one workspace of the org", team_id=team, enterprise_id=enterprise
    )
    installations = PostgresInstallationStore(
        store,
        client_id="1111.2222",
        cipher=TokenCipher.from_setting(
            SecretStr(Fernet.generate_key().decode()), sealing="test secrets"
        ),
    )
    # Installed once for the whole organisation: its bot row has no team.
    await installations.async_save(
        Installation(
            app_id="A_RUNBOOK",
            enterprise_id=enterprise,
            team_id=None,
            is_enterprise_install=True,
            user_id="U_INSTALLER",
            bot_token=f"xoxb-org-{enterprise}",
            bot_id="BBOT",
            bot_user_id="UBOT",
        )
    )
    async with FakeSlack() as slack:
        app_client = AsyncWebClient(base_url=slack.base_url)  # OAuth: no token of its own
        messenger = SlackOwnerMessenger(
            store=store, client=app_client, installations=installations, api_url=slack.base_url
        )
        await flush_owner_notes(store, {"slack": messenger}, batch_minutes=60)
        [post] = slack.calls_to("chat.postMessage")

    assert post.token == f"xoxb-org-{enterprise}"
    assert (post.body["channel"], post.body["team_id"]) == ("#sre", team), "#sre of that workspace"
    assert await _outcomes(store, tenant) == [("slack", "sent")]
