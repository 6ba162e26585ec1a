"""Slack self-service end to end, against the fake Slack: an OAuth install makes a tenant, App
Home is its settings page (controls for admins only), and every change is checked on the server:
a member's forged click, a view of another workspace, a channel the bot is not in, a workspace
uninstalled while its modal is open all change nothing and say why."""

from __future__ import annotations

import asyncio
import itertools
import json
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from cryptography.fernet import Fernet
from pydantic import SecretStr
from slack_sdk.models.blocks import Block
from slack_sdk.web.async_client import AsyncWebClient

from bot.core.admin.audit import recent_changes
from bot.core.admin.lifecycle import is_uninstalled
from bot.core.alerts.channel_settings import channel_settings
from bot.slack.home import ids
from rag import RagService, Settings, Store, find_tenant, list_sources
from tests import credentials
from tests.fakes.slack_api import FakeSlack, SlackSender
from tests.git_repos import GitRepo
from tests.slack_harness import ServedApp, served_app

pytestmark = pytest.mark.filterwarnings("ignore:BasicAuth is deprecated:DeprecationWarning")

SECRET = credentials.SLACK_SIGNING_SECRET
INSTALLER, MEMBER, WS_ADMIN = "U_INSTALLER", "U_MEMBER", "U_WSADMIN"
CHANNELS = [("C_OPS", "ops"), ("C_ALERTS", "alerts-payments")]
_TRIGGERS = itertools.count(1)


@dataclass
class Workspace:
    app: ServedApp
    slack: FakeSlack
    sender: SlackSender
    team: str
    tenant: str

    async def home(self, user: str) -> dict[str, Any]:
        """Open App Home as ``user``; the view published for them."""
        before = len(self.published(user))
        event = {"type": "app_home_opened", "user": user, "channel": "D1", "tab": "home"}
        reply = await self.sender.event(
            {**event, "event_ts": f"{time.time():.6f}"}, team_id=self.team
        )
        assert reply.status == 200
        return await self.next_view(user, before)

    def published(self, user: str) -> list[dict[str, Any]]:
        calls = self.slack.calls_to("views.publish")
        return [
            {**c.body["view"], "id": c.reply["view"]["id"]}
            for c in calls
            if c.body.get("user_id") == user
        ]

    async def next_view(self, user: str, before: int) -> dict[str, Any]:
        await self.slack.wait_for(
            "views.publish", before + 1, where=lambda c: c.body.get("user_id") == user
        )
        return self.published(user)[-1]

    async def click(
        self, user: str, view: dict[str, Any], action: dict[str, Any], *, publishes: bool = True
    ) -> dict[str, Any]:
        """A block action on ``view`` as ``user``; the page republished for them after it (or
        ``{}`` when the click opens a modal instead)."""
        before, team = len(self.published(user)), self.team
        payload = {
            "type": "block_actions",
            "team": {"id": team, "domain": "acme"},
            "user": {"id": user, "team_id": team},
            "api_app_id": "A_RUNBOOK",
            "trigger_id": f"{next(_TRIGGERS)}.trigger",
            "container": {"type": "view", "view_id": view.get("id")},
            "view": {**view, "state": {"values": {}}},
            "actions": [{"action_ts": f"{time.time():.6f}", **action}],
            "is_enterprise_install": False,
        }
        reply = await self.sender.interaction(payload)
        assert reply.status == 200
        return await self.next_view(user, before) if publishes else {}

    async def submit(self, user: str, modal: dict[str, Any], values: dict[str, str]) -> str:
        state = {k: {k: {"type": "plain_text_input", "value": v}} for k, v in values.items()}
        payload = {
            "type": "view_submission",
            "team": {"id": self.team, "domain": "acme"},
            "user": {"id": user, "team_id": self.team},
            "api_app_id": "A_RUNBOOK",
            "view": {**modal, "id": modal.get("id", "VMODAL"), "state": {"values": state}},
            "is_enterprise_install": False,
        }
        reply = await self.sender.interaction(payload)
        assert reply.status == 200
        return reply.body


def oauth(settings: Settings, **more: object) -> Settings:
    return settings.model_copy(
        update={
            "slack_signing_secret": SecretStr(SECRET),
            "slack_client_id": "1111.2222",
            "slack_client_secret": SecretStr(credentials.SLACK_CLIENT_SECRET),
            "encryption_keys": SecretStr(Fernet.generate_key().decode()),
            **more,
        }
    )


async def install(app: ServedApp, team: str) -> None:
    """Through /slack/install and /slack/oauth_redirect, as a browser does."""
    async with aiohttp.ClientSession() as http:
        async with http.get(app.url + "/slack/install") as resp:
            state = resp.cookies["slack-app-oauth-state"].value
        callback = f"{app.url}/slack/oauth_redirect?code={team}&state={state}"
        async with http.get(callback, headers={"Cookie": f"slack-app-oauth-state={state}"}) as resp:
            assert resp.status == 200


@asynccontextmanager
async def workspace(
    settings: Settings, store: Store, service: RagService, **more: object
) -> AsyncIterator[Workspace]:
    configured = oauth(settings, **more)
    team = f"T{uuid.uuid4().hex[:8].upper()}"
    async with FakeSlack() as slack:
        slack.bot_channels = list(CHANNELS)
        slack.workspace_admins = {WS_ADMIN}
        client = AsyncWebClient(base_url=slack.base_url)
        async with served_app(
            settings=configured, service=service, store=store, client=client
        ) as app:
            await install(app, team)
            tenant = await find_tenant(store, team_id=team, enterprise_id="") or ""
            yield Workspace(app, slack, SlackSender(app.events_url, SECRET), team, tenant)


def controls(view: dict[str, Any]) -> list[dict[str, Any]]:
    found = []
    for block in view["blocks"]:
        for element in [*block.get("elements", []), block.get("accessory")]:
            if isinstance(element, dict) and "action_id" in element:
                found.append({**element, "block_id": block.get("block_id")})
    return found


def control(view: dict[str, Any], action_id: str, block_id: str | None = None) -> dict[str, Any]:
    return next(
        c
        for c in controls(view)
        if c["action_id"] == action_id and block_id in (None, c["block_id"])
    )


def text_of(view: dict[str, Any]) -> str:
    return json.dumps(view["blocks"])


async def test_install_makes_a_tenant_whose_installer_gets_the_admin_home(
    settings: Settings, store: Store, service: RagService
) -> None:
    async with workspace(settings, store, service) as ws:
        assert ws.tenant.startswith("installed-workspace")
        view = await ws.home(INSTALLER)
        assert view["type"] == "home" and len(view["blocks"]) <= 100
        for block in view["blocks"]:
            parsed = Block.parse(block)
            assert parsed is not None
            parsed.validate_json()
        assert "alerts-payments" in text_of(view) and "Runbook sources" in text_of(view)
        kinds = {c["action_id"] for c in controls(view)}
        assert {
            ids.CHANNEL_SWITCHES,
            ids.SOURCE_ADD_GIT,
            ids.OWNER_USER,
            ids.ADMIN_ADD_USERS,
        } <= kinds
        [installed] = await recent_changes(store, ws.tenant)
        assert (installed.action, installed.actor) == ("tenant.installed", INSTALLER)


async def test_a_member_reads_the_page_and_a_forged_click_changes_nothing_and_says_why(
    settings: Settings, store: Store, service: RagService
) -> None:
    async with workspace(settings, store, service) as ws:
        admin_view = await ws.home(INSTALLER)
        member_view = await ws.home(MEMBER)
        assert controls(member_view) == [] and "Read only" in text_of(member_view)
        switches = control(admin_view, ids.CHANNEL_SWITCHES, "ch:C_ALERTS")
        forged = {
            "type": "checkboxes",
            "action_id": switches["action_id"],
            "block_id": "ch:C_ALERTS",
            "selected_options": switches["options"][:1],
        }
        answer = await ws.click(MEMBER, admin_view, forged)
        assert "Only this workspace's admins" in text_of(answer)
        assert not (await channel_settings(store, ws.tenant, ws.team, "C_ALERTS")).alerts
        assert [e.action for e in await recent_changes(store, ws.tenant)] == ["tenant.installed"]


async def test_a_workspace_admin_switches_alert_answers_on_and_the_page_updates_in_place(
    settings: Settings, store: Store, service: RagService
) -> None:
    async with workspace(settings, store, service) as ws:
        view = await ws.home(WS_ADMIN)  # an admin by users.info alone
        switches = control(view, ids.CHANNEL_SWITCHES, "ch:C_ALERTS")
        on = {
            "type": "checkboxes",
            "action_id": ids.CHANNEL_SWITCHES,
            "block_id": "ch:C_ALERTS",
            "selected_options": [o for o in switches["options"] if o["value"] == "alerts"],
        }
        after = await ws.click(WS_ADMIN, view, on)
        assert (await channel_settings(store, ws.tenant, ws.team, "C_ALERTS")).alerts
        redrawn = control(after, ids.CHANNEL_SWITCHES, "ch:C_ALERTS")
        assert [o["value"] for o in redrawn["initial_options"]] == ["alerts"]
        assert "alert answers on" in text_of(after)
        [change, _] = await recent_changes(store, ws.tenant)
        assert (change.actor, change.action, change.target) == (
            WS_ADMIN,
            "channel.alerts",
            "C_ALERTS",
        )
        assert (change.before, change.after) == (False, True)


async def test_a_view_of_another_workspace_or_a_channel_the_bot_is_not_in_changes_nothing(
    settings: Settings, store: Store, service: RagService
) -> None:
    async with workspace(settings, store, service) as ws:
        view = await ws.home(INSTALLER)
        elsewhere = {**view, "private_metadata": ids.ViewOrigin("globex", "T_GLOBEX").encode()}
        on = {
            "type": "checkboxes",
            "action_id": ids.CHANNEL_SWITCHES,
            "block_id": "ch:C_ALERTS",
            "selected_options": [{"text": {"type": "plain_text", "text": "x"}, "value": "alerts"}],
        }
        answer = await ws.click(INSTALLER, elsewhere, on)
        assert "another workspace or an earlier install" in text_of(answer)
        foreign = {**on, "block_id": "ch:C_NOT_MINE"}
        answer = await ws.click(INSTALLER, view, foreign)
        assert "not one of this workspace's channels" in text_of(answer)
        for channel in ("C_ALERTS", "C_NOT_MINE"):
            assert not (await channel_settings(store, ws.tenant, ws.team, channel)).alerts
        assert [e.action for e in await recent_changes(store, ws.tenant)] == ["tenant.installed"]


async def test_default_owner_and_admins_are_set_from_the_page(
    settings: Settings, store: Store, service: RagService
) -> None:
    async with workspace(settings, store, service) as ws:
        view = await ws.home(INSTALLER)
        pick = {
            "type": "conversations_select",
            "action_id": ids.OWNER_CHANNEL,
            "block_id": "owners",
            "selected_conversation": "C_OPS",
        }
        view = await ws.click(INSTALLER, view, pick)
        assert "<#C_OPS>" in text_of(view)
        add = {
            "type": "multi_users_select",
            "action_id": ids.ADMIN_ADD_USERS,
            "block_id": "admins.add",
            "selected_users": [MEMBER],
        }
        await ws.click(INSTALLER, view, add)
        member_view = await ws.home(MEMBER)
        assert controls(member_view)  # an admin now
        actions = [e.action for e in await recent_changes(store, ws.tenant)]
        assert actions[:2] == ["admin.added", "owner.default"]


async def test_the_add_source_modal_shows_a_private_url_as_a_field_error(
    settings: Settings, store: Store, service: RagService
) -> None:
    async with workspace(settings, store, service) as ws:
        view = await ws.home(INSTALLER)
        await ws.click(
            INSTALLER,
            view,
            {
                "type": "button",
                "action_id": ids.SOURCE_ADD_GIT,
                "block_id": "sources.add",
                "value": "git",
            },
            publishes=False,
        )
        [opened] = await ws.slack.wait_for("views.open")
        modal = {**opened.body["view"], "id": opened.reply["view"]["id"]}
        assert {b["block_id"] for b in modal["blocks"] if b["type"] == "input"} >= {"url", "token"}
        body = await ws.submit(
            INSTALLER,
            modal,
            {"url": "https://10.0.0.7/acme/runbooks.git", "token": "ghp_typed_once_9876"},
        )
        answer = json.loads(body)
        assert answer["response_action"] == "errors" and "private" in answer["errors"]["url"]
        assert "ghp_typed_once_9876" not in body
        assert await list_sources(store, tenant=ws.tenant) == []


async def test_uninstall_while_the_modal_is_open_adds_nothing_and_a_reinstall_finds_the_tenant(
    settings: Settings, store: Store, service: RagService
) -> None:
    async with workspace(settings, store, service) as ws:
        view = await ws.home(INSTALLER)
        on = {
            "type": "checkboxes",
            "action_id": ids.CHANNEL_SWITCHES,
            "block_id": "ch:C_OPS",
            "selected_options": [
                {"text": {"type": "plain_text", "text": "x"}, "value": "follow_ups"}
            ],
        }
        await ws.click(INSTALLER, view, on)
        modal = {
            "type": "modal",
            "callback_id": ids.ADD_SOURCE_CALLBACK,
            "id": "VOPEN",
            "private_metadata": ids.ViewOrigin(ws.tenant, ws.team).encode() + "|git",
            "blocks": [{"type": "input", "block_id": "url"}],
        }
        await ws.sender.event({"type": "app_uninstalled"}, team_id=ws.team)
        deadline = time.monotonic() + 10
        while not await is_uninstalled(store, ws.tenant):
            assert time.monotonic() < deadline
            await asyncio.sleep(0.05)
        body = await ws.submit(INSTALLER, modal, {"url": "https://github.com/acme/runbooks.git"})
        assert "not installed" in body or "uninstalled" in body
        assert await list_sources(store, tenant=ws.tenant) == []
        await install(ws.app, ws.team)
        assert await find_tenant(store, team_id=ws.team, enterprise_id="") == ws.tenant
        assert not await is_uninstalled(store, ws.tenant)
        assert (await channel_settings(store, ws.tenant, ws.team, "C_OPS")).follow_ups
        actions = [e.action for e in await recent_changes(store, ws.tenant)]
        assert actions[:2] == ["tenant.reinstalled", "tenant.uninstalled"]


async def test_with_self_service_off_an_install_stays_unmapped(
    settings: Settings, store: Store, service: RagService
) -> None:
    async with workspace(settings, store, service, self_service=False) as ws:
        assert ws.tenant == ""
        view = await ws.home(INSTALLER)
        assert "not connected" in text_of(view) and controls(view) == []


async def test_a_tested_source_is_added_once_however_often_its_modal_is_submitted(
    settings: Settings, store: Store, service: RagService, tmp_path: Path
) -> None:
    repo = GitRepo(tmp_path / "runbooks")
    repo.write("db/failover.md", "# Failover\n\nPromote the replica.\n")
    repo.commit("first")
    async with workspace(settings, store, service, source_allow_file=True) as ws:
        view = await ws.home(INSTALLER)
        add = {"type": "button", "action_id": ids.SOURCE_ADD_GIT, "block_id": "sources.add"}
        await ws.click(INSTALLER, view, {**add, "value": "git"}, publishes=False)
        [opened] = await ws.slack.wait_for("views.open")
        modal = {**opened.body["view"], "id": opened.reply["view"]["id"]}
        typed = {"url": repo.url, "token": "ghp_sealed_at_once_5150"}
        before = len(ws.published(INSTALLER))
        bodies = await asyncio.gather(*(ws.submit(INSTALLER, modal, typed) for _ in range(2)))
        assert all("errors" not in body for body in bodies)  # the modal closes
        [row] = await list_sources(store, tenant=ws.tenant)
        assert row.name == "runbooks" and "ghp_sealed_at_once_5150" not in json.dumps(
            row.credential
        )
        page = await ws.next_view(INSTALLER, before + 1)  # each submission redraws the page
        assert "runbooks" in text_of(page)
        assert control(page, ids.SOURCE_SYNC)["value"] == str(row.source_id)
        removed = await ws.click(
            INSTALLER, page, {**control(page, ids.SOURCE_REMOVE), "type": "button"}
        )
        assert await list_sources(store, tenant=ws.tenant) == []
        assert "No runbook sources yet" in text_of(removed)
