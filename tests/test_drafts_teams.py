"""The Teams message action "Draft a runbook from this thread" (issue 40): the thread read
through Graph replies (every page) into the review dialog, who may open a pull request, and the
submission delivered to the fake GitHub with its link posted back into the thread."""

from __future__ import annotations

import html
import json
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cryptography.fernet import Fernet
from pydantic import SecretStr

from bot.teams.config import TeamsMode
from bot.teams.tenancy import add_teams_tenant
from rag import RagService, Settings, Store, remove_source
from tests import credentials
from tests.drafts_slack import forge_source
from tests.drafts_threads import ALERT, COMMANDS, REPLIES, SECRET
from tests.fakes.bot_connector import FakeBotConnector
from tests.fakes.forge import FakeForge
from tests.fakes.graph import FakeGraph
from tests.git_repos import local_sources
from tests.teams_harness import (
    ALERTS,
    USER,
    ServedTeams,
    invoke,
    new_aad_tenant,
    new_id,
    served_teams,
    teams_settings,
)

GROUP = "0c4e2f1a-7b3d-4e5f-9a8b-1c2d3e4f5a6b"


def as_html(text: str) -> str:
    """A reply as Teams clients post it: code blocks in ``<pre>``, spans in ``<code>``."""
    escaped = html.escape(text, quote=False)
    escaped = re.sub(r"```\n(.*?)\n```", r"<pre><code>\1</code></pre>", escaped, flags=re.S)
    escaped = re.sub(r"`([^`]+)`", r"<code>\1</code>", escaped)
    return "<p>" + escaped.replace("\n", "<br>") + "</p>"


@dataclass
class TeamsDrafts:
    served: ServedTeams
    connector: FakeBotConnector
    graph: FakeGraph
    forge: FakeForge
    aad: str

    def kafka_thread(self) -> str:
        """The Kafka incident as a Graph thread in the alerts channel; its root's id."""
        root = new_id()
        app = {"id": "workflows", "displayName": "Workflows", "applicationIdentityType": "bot"}
        self.graph.messages[(GROUP, ALERTS, root)] = {
            "id": root,
            "from": {"application": app, "user": None},
            "body": {"contentType": "text", "content": ALERT},
            "attachments": [],
            "webUrl": f"https://teams.microsoft.com/l/message/{ALERTS}/{root}",
        }
        self.graph.replies[(GROUP, ALERTS, root)] = [
            {
                "id": str(int(root) + n),
                "replyToId": root,
                "createdDateTime": f"2026-12-07T20:{n:02d}:00Z",
                "from": {"user": {"id": user, "displayName": name}},
                "body": {"contentType": "html", "content": as_html(text)},
                "webUrl": f"https://teams.microsoft.com/l/message/{ALERTS}/{int(root) + n}",
            }
            for n, (user, name, text) in enumerate(REPLIES, start=1)
        ]
        return root

    async def action(self, name: str, root: str, data: dict[str, Any] | None = None) -> Any:
        value: dict[str, Any] = {
            "commandId": "draftRunbook",
            "commandContext": "message",
            "messagePayload": {"id": str(int(root) + 3), "replyToId": root},
        }
        if data is not None:
            value["data"] = data
        activity = invoke(
            name,
            value,
            service_url=self.connector.service_url,
            aad_tenant=self.aad,
            conversation_id=ALERTS,
        )
        activity["channelData"]["team"]["aadGroupId"] = GROUP
        status, body, _ = await self.served.send(activity)
        assert status == 200
        return json.loads(body) if body else None


@asynccontextmanager
async def teams_drafts(
    settings: Settings, service: RagService, store: Store, tmp_path: Path, **overrides: Any
) -> AsyncIterator[TeamsDrafts]:
    async with (
        FakeBotConnector() as connector,
        FakeGraph(credentials.TEAMS_APP_PASSWORD) as graph,
        FakeForge(tmp_path / "forge") as forge,
    ):
        # The fake forge listens on 127.0.0.1: delivery needs the operator's local allowances.
        local = teams_settings(
            local_sources(settings), jwks_url="http://127.0.0.1:9/keys", local=True
        )
        configured = local.model_copy(
            update={
                "teams_graph_url": graph.graph_url,
                "teams_login_url": graph.login_url,
                "teams_service_url": connector.service_url,
                "teams_app_password": SecretStr(credentials.TEAMS_APP_PASSWORD),
                "encryption_keys": SecretStr(Fernet.generate_key().decode()),
                **overrides,
            }
        )
        source = await forge_source(store, forge)
        try:
            async with served_teams(
                settings=configured, service=service, store=store, mode=TeamsMode("local")
            ) as served:
                aad = new_aad_tenant()
                await add_teams_tenant(store, aad, "acme")
                yield TeamsDrafts(served, connector, graph, forge, aad)
        finally:
            await remove_source(store, source, prune=True)


def inputs(task: dict[str, Any]) -> dict[str, Any]:
    card = task["task"]["value"]["card"]["content"]
    return {e["id"]: e for e in card["body"] if str(e.get("type", "")).startswith("Input.")}


async def test_the_dialog_drafts_the_graph_thread_in_order_without_its_secret(
    settings: Settings, service: RagService, store: Store, tmp_path: Path
) -> None:
    async with teams_drafts(settings, service, store, tmp_path, draft_pr_anyone=True) as teams:
        task = await teams.action("composeExtension/fetchTask", teams.kafka_thread())
        pages = [c.path for c in teams.graph.calls if c.path.endswith("/replies")]
    fields = inputs(task)
    text = fields["draft_text"]["value"]
    assert task["task"]["type"] == "continue"
    assert fields["draft_title"]["value"] == "KafkaBrokerDiskUsageHigh"
    positions = [text.index(command) for command in COMMANDS]
    assert positions == sorted(positions)
    assert SECRET not in json.dumps(task) and "**1** secret(s) redacted" in json.dumps(task)
    assert fields["draft_owner"]["value"] == USER["name"]
    assert len(pages) == 5  # nine replies, two to a page: every page was read


async def test_a_member_who_is_no_admin_and_owns_no_runbook_is_refused(
    settings: Settings, service: RagService, store: Store, tmp_path: Path
) -> None:
    async with teams_drafts(settings, service, store, tmp_path) as teams:
        root = teams.kafka_thread()
        task = await teams.action("composeExtension/fetchTask", root)
        forged = await teams.action(
            "composeExtension/submitAction", root, {"tenant": "acme", "draft_id": "d-x"}
        )
        read = [c.path for c in teams.graph.calls if "/messages/" in c.path]
    assert task["task"]["type"] == "message" and "runbook owner" in task["task"]["value"]
    assert forged["task"]["type"] == "message" and teams.forge.pulls == []
    assert read == []  # refused before the thread was read


async def test_a_submitted_draft_opens_one_pull_request_and_its_link_goes_into_the_thread(
    settings: Settings, service: RagService, store: Store, tmp_path: Path
) -> None:
    async with teams_drafts(settings, service, store, tmp_path, draft_pr_anyone=True) as teams:
        root = teams.kafka_thread()
        task = await teams.action("composeExtension/fetchTask", root)
        data = {k: v["value"] for k, v in inputs(task).items()}
        card = task["task"]["value"]["card"]["content"]
        data |= card["actions"][0]["data"] | {"draft_owner": "Kafka Team"}
        assert await teams.action("composeExtension/submitAction", root, data) is None
        again = await teams.action("composeExtension/submitAction", root, data)
        [message] = await teams.connector.wait_for_messages(f"{ALERTS};messageid={root}", 1)
        assert await teams.served.tasks.drain(15) == 0
        pulls = list(teams.forge.pulls)
        files = {p.head: teams.forge.changed_files(p) for p in pulls}
    [pull] = pulls
    [content] = files[pull.head].values()
    assert "On-call (Teams)" in pull.body and SECRET not in content
    assert 'owner: "Kafka Team"' in content
    assert again["task"]["type"] == "message"  # the double submit queued nothing twice
    posted = json.dumps(message.body)
    assert f"pull/{pull.number}" in posted and "Kafka Team" in posted
