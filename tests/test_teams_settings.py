"""Teams self-service end to end, against the fake Bot Connector: an organisation whose user
installs the app becomes a tenant with that user as admin; ``settings`` in the personal chat
shows the settings card; its Action.Execute controls are checked on the server and answer with
the card redrawn (refreshed in place); an uninstall starts the retention window."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest_asyncio
from cryptography.fernet import Fernet
from pydantic import SecretStr

from bot.core.admin.admins import list_admins
from bot.core.admin.audit import recent_changes
from bot.core.admin.lifecycle import is_uninstalled
from bot.core.alerts.channel_settings import channel_settings, set_channel_switch
from bot.teams.settings import card as settings_card
from bot.teams.tenancy import find_teams_tenant
from rag import RagService, Settings, Store, list_sources
from tests.adaptive_cards import card_problems
from tests.fakes.bot_connector import FakeBotConnector
from tests.fakes.entra_keys import TokenIssuer
from tests.git_repos import GitRepo
from tests.teams_harness import (
    APP_ID,
    USER,
    ServedTeams,
    _envelope,
    new_aad_tenant,
    new_id,
    personal,
    served_teams,
    teams_settings,
)

CHAT = "a:1personal-chat-with-the-bot"
CHANNEL = "19:incidents-settings@thread.tacv2"
OTHER = {**USER, "id": "29:other", "aadObjectId": "0d0d0d0d-1111-4222-8333-444444444444"}


@dataclass
class Org:
    served: ServedTeams
    connector: FakeBotConnector
    issuer: TokenIssuer
    aad: str

    async def send(self, activity: dict[str, Any]) -> tuple[int, str]:
        token = self.issuer.token(audience=APP_ID, service_url=self.connector.service_url)
        status, body, seconds = await self.served.send(activity, token=token)
        assert seconds < 3
        return status, body

    def conversation(self) -> dict[str, Any]:
        return {"id": CHAT, "conversationType": "personal", "tenantId": self.aad}

    async def install(self, action: str = "add") -> None:
        activity = _envelope(
            "installationUpdate",
            self.conversation(),
            self.connector.service_url,
            id=new_id(),
            action=action,
        )
        status, _ = await self.send(activity)
        assert 200 <= status < 300

    async def settings_card(self) -> dict[str, Any]:
        before = len(self.connector.live_messages(CHAT))
        status, _ = await self.send(
            personal(
                "settings", service_url=self.connector.service_url, aad_tenant=self.aad, chat=CHAT
            )
        )
        assert 200 <= status < 300
        messages = await self.connector.wait_for_messages(CHAT, before + 1, settle=0.1)
        [attachment] = messages[-1].final["attachments"]
        card: dict[str, Any] = attachment["content"]
        assert card_problems(card) == []
        return card

    async def execute(
        self, verb: str, data: dict[str, Any], user: dict[str, Any]
    ) -> dict[str, Any]:
        action = {"type": "Action.Execute", "verb": verb, "data": data}
        activity = _envelope(
            "invoke",
            self.conversation(),
            self.connector.service_url,
            id=new_id(),
            name="adaptiveCard/action",
            value={"action": action, "trigger": "manual"},
        )
        activity["from"] = user
        status, body = await self.send(activity)
        response = json.loads(body)
        assert status == 200 and response["statusCode"] == 200
        card: dict[str, Any] = response["value"]
        assert card_problems(card) == []
        return card


@pytest_asyncio.fixture(loop_scope="session")
async def org(settings: Settings, service: RagService, store: Store) -> AsyncIterator[Org]:
    async with FakeBotConnector() as connector, TokenIssuer() as issuer:
        local = teams_settings(settings, jwks_url=issuer.jwks_url, local=True)
        # file:// git sources for the add-a-source test (the operator's allowance, issue 36);
        # a key, so a token can be sealed.
        local = local.model_copy(
            update={
                "source_allow_file": True,
                "encryption_keys": SecretStr(Fernet.generate_key().decode()),
            }
        )
        async with served_teams(settings=local, service=service, store=store) as served:
            yield Org(served, connector, issuer, new_aad_tenant())


def verbs(card: dict[str, Any]) -> set[str]:
    found: set[str] = set()

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if node.get("type") == "Action.Execute":
                found.add(str(node.get("verb")))
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(card)
    return found


async def test_an_install_makes_the_organisation_a_tenant_with_the_installer_as_admin(
    org: Org, store: Store
) -> None:
    await org.install()
    tenant = await find_teams_tenant(store, org.aad)
    assert tenant is not None and tenant.startswith("teams-")
    assert [a.principal for a in await list_admins(store, tenant, "teams")] == [USER["aadObjectId"]]
    card = await org.settings_card()
    assert {settings_card.ADMIN_ADD, settings_card.OWNER} <= verbs(card)
    assert settings_card.CHANNEL not in verbs(card)  # no channel has settings yet
    assert "Runbook sources" in json.dumps(card)


async def test_a_non_admin_changes_nothing_and_an_admin_switches_a_channel_in_place(
    org: Org, store: Store
) -> None:
    await org.install()
    tenant = await find_teams_tenant(store, org.aad)
    assert tenant is not None
    await set_channel_switch(store, tenant, org.aad, CHANNEL, "follow_ups", True)
    data = {"channel_id": CHANNEL, "switch": "alerts", "on": True}
    refused = await org.execute(settings_card.CHANNEL, data, OTHER)
    assert "Only this workspace's admins" in json.dumps(refused)
    assert settings_card.CHANNEL not in verbs(refused)  # the reader's card has no controls
    assert not (await channel_settings(store, tenant, org.aad, CHANNEL)).alerts
    changed = await org.execute(settings_card.CHANNEL, data, USER)
    assert (await channel_settings(store, tenant, org.aad, CHANNEL)).alerts
    assert "alert answers on" in json.dumps(changed) and "Alert answers off" in json.dumps(changed)
    foreign = await org.execute(
        settings_card.CHANNEL, {**data, "channel_id": "19:x@thread.tacv2"}, USER
    )
    assert "not one of this organisation's" in json.dumps(foreign)
    [change, *_] = await recent_changes(store, tenant)
    assert (change.actor, change.action, change.target) == (
        USER["aadObjectId"],
        "channel.alerts",
        CHANNEL,
    )


async def test_an_admin_adds_an_admin_and_an_uninstall_starts_the_retention_window(
    org: Org, store: Store
) -> None:
    await org.install()
    tenant = await find_teams_tenant(store, org.aad)
    assert tenant is not None
    card = await org.execute(settings_card.ADMIN_ADD, {"admin_id": "not-a-guid"}, USER)
    assert "Entra object id" in json.dumps(card)
    await org.execute(settings_card.ADMIN_ADD, {"admin_id": OTHER["aadObjectId"]}, USER)
    assert settings_card.ADMIN_REMOVE in verbs(await org.execute(settings_card.REFRESH, {}, OTHER))
    await org.install("remove")
    assert await is_uninstalled(store, tenant)
    card = await org.settings_card()
    assert not verbs(card) & {settings_card.CHANNEL, settings_card.ADMIN_ADD}
    await org.install("add")
    assert not await is_uninstalled(store, tenant)
    assert len(await list_admins(store, tenant, "teams")) == 2  # as it was


async def test_an_admin_adds_a_source_from_the_card_and_a_private_url_is_refused(
    org: Org, store: Store, tmp_path: Path
) -> None:
    await org.install()
    tenant = await find_teams_tenant(store, org.aad)
    assert tenant is not None
    inputs = settings_card.SOURCE_INPUTS
    private = {inputs["kind"]: "git", inputs["url"]: "https://192.168.1.9/ops/runbooks.git"}
    card = await org.execute(settings_card.SOURCE_ADD, private, USER)
    assert "192.168.1.9 is a private address" in json.dumps(card)
    repo = GitRepo(tmp_path / "runbooks")
    repo.write("db/failover.md", "# Failover\n\nPromote the replica.\n")
    repo.commit("first")
    typed = {inputs["kind"]: "git", inputs["url"]: repo.url, inputs["token"]: "tok-sealed-4242"}
    assert (await org.execute(settings_card.SOURCE_ADD, typed, OTHER)) and not await list_sources(
        store, tenant=tenant
    )  # not an admin
    card = await org.execute(settings_card.SOURCE_ADD, typed, USER)
    assert "source runbooks added" in json.dumps(card)
    assert "tok-sealed-4242" not in json.dumps(card)
    [row] = await list_sources(store, tenant=tenant)
    assert row.name == "runbooks" and "tok-sealed-4242" not in json.dumps(row.credential)
    assert settings_card.SOURCE_SYNC in verbs(card)
