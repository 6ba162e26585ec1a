"""The Slack app with a fake Slack and a fake forge, and an incident thread kept in the fake:
what the thread-to-runbook tests drive (shortcut, modal, submission)."""

from __future__ import annotations

import itertools
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import SecretStr
from slack_sdk.web.async_client import AsyncWebClient

from bot.core.tasks import BackgroundTasks
from rag import (
    Embedder,
    RagService,
    Settings,
    SourceRow,
    Store,
    add_source,
    add_workspace,
    remove_source,
)
from rag.answering.answerers import ExtractiveAnswerer
from tests import credentials
from tests.fakes.forge import TOKEN, FakeForge
from tests.fakes.slack_api import BOT_USER_ID, FakeSlack, SlackCall, SlackSender
from tests.git_repos import local_sources
from tests.slack_harness import served_app

SECRET = credentials.SLACK_SIGNING_SECRET
CHANNEL = "C_INC"
ADMIN, MEMBER = "U_ADMIN", "U_MEMBER"
_TS = itertools.count(1)


@dataclass
class DraftHarness:
    slack: FakeSlack
    sender: SlackSender
    tasks: BackgroundTasks
    forge: FakeForge
    store: Store

    def thread(
        self, replies: list[tuple[str, str]], *, root: dict[str, Any], channel: str = CHANNEL
    ) -> list[dict[str, Any]]:
        """Keep a thread in the fake: ``root`` and each (user, text) reply, in order."""
        thread_ts = fresh_ts()
        self.slack.set_thread_root(channel, thread_ts, {"type": "message", **root})
        posted = [{"type": "message", "ts": thread_ts, **root}]
        for user, text in replies:
            message = {
                "type": "message",
                "ts": fresh_ts(),
                "thread_ts": thread_ts,
                "user": user,
                "text": text,
            }
            self.slack.messages[channel].append(message)
            posted.append(message)
        return posted

    async def mention(
        self, message_thread_ts: str, text: str, *, user: str = MEMBER, channel: str = CHANNEL
    ) -> None:
        """An @mention in the thread, kept in it like the replies."""
        ts = fresh_ts()
        event = {
            "type": "app_mention",
            "user": user,
            "channel": channel,
            "ts": ts,
            "thread_ts": message_thread_ts,
            "text": f"<@{BOT_USER_ID}> {text}",
        }
        self.slack.messages[channel].append({**event, "type": "message"})
        await self.sender.event(event)

    async def shortcut(
        self, message: dict[str, Any], *, user: str = ADMIN, channel: str = CHANNEL
    ) -> dict[str, Any]:
        """The "Draft a runbook from this thread" shortcut; returns the view it opened."""
        before = len(self.slack.calls_to("views.open"))
        payload = {
            "type": "message_action",
            "callback_id": "draft_runbook",
            "team": {"id": "T_ACME", "domain": "acme"},
            "user": {"id": user, "team_id": "T_ACME"},
            "channel": {"id": channel},
            "message": message,
            "message_ts": message["ts"],
            "response_url": self.slack.response_url("draft"),
            "trigger_id": f"trigger-draft-{uuid.uuid4().hex[:12]}",
        }
        reply = await self.sender.interaction(payload)
        assert reply.status == 200
        calls = await self.slack.wait_for("views.open", before + 1)
        view = calls[-1].body["view"]
        return view if isinstance(view, dict) else {}

    async def submit(self, view: dict[str, Any], *, user: str = ADMIN, **changes: Any) -> str:
        """Submit the modal with the values it shows (``changes`` by block id); returns the
        app's reply body (empty: closed)."""
        values: dict[str, Any] = {}
        for block in view["blocks"]:
            if block["type"] != "input":
                continue
            element = block["element"]
            kind, value = element["type"], changes.get(block["block_id"])
            if kind == "plain_text_input":
                state = {
                    "type": kind,
                    "value": value if value is not None else element.get("initial_value"),
                }
            elif kind == "users_select":
                state = {"type": kind, "selected_user": value or element.get("initial_user")}
            else:
                chosen = next(
                    (o for o in element["options"] if o["value"] == value),
                    element["initial_option"],
                )
                state = {"type": kind, "selected_option": chosen}
            values[block["block_id"]] = {element["action_id"]: state}
        payload = {
            "type": "view_submission",
            "team": {"id": "T_ACME", "domain": "acme"},
            "user": {"id": user, "team_id": "T_ACME"},
            "api_app_id": "A_RUNBOOK",
            "trigger_id": f"trigger-submit-{uuid.uuid4().hex[:8]}",
            "view": {**view, "id": "V_DRAFT", "team_id": "T_ACME", "state": {"values": values}},
        }
        reply = await self.sender.interaction(payload)
        assert reply.status == 200
        return reply.body

    async def settle(self) -> None:
        assert await self.tasks.drain(30) == 0


def fresh_ts() -> str:
    return f"{int(time.time())}.{next(_TS):06d}"


@asynccontextmanager
async def draft_bot(
    settings: Settings,
    store: Store,
    embedder: Embedder,
    tmp_path: Path,
    **overrides: Any,
) -> AsyncIterator[DraftHarness]:
    """The app of ``runbook serve`` for workspace T_ACME (tenant acme), a fake Slack where
    ``U_ADMIN`` is a workspace admin, and a fake GitHub whose ``acme/runbooks`` is a git source
    of acme for the test's duration."""
    await add_workspace(store, "T_ACME", "acme")
    # The fake forge listens on 127.0.0.1: delivery needs the operator's local allowances.
    slack_settings = local_sources(settings).model_copy(
        update={"slack_signing_secret": SecretStr(SECRET), **overrides}
    )
    service = RagService(
        store=store, embedder=embedder, answerer=ExtractiveAnswerer(), settings=slack_settings
    )
    async with FakeSlack() as slack, FakeForge(tmp_path / "forge") as forge:
        slack.users[ADMIN] = {"is_admin": True, "real_name": "Ada Admin"}
        slack.users[MEMBER] = {"real_name": "Mo Member"}
        source = await forge_source(store, forge)
        try:
            client = AsyncWebClient(token=credentials.SLACK_BOT_TOKEN, base_url=slack.base_url)
            async with served_app(
                settings=slack_settings, service=service, store=store, client=client
            ) as served:
                sender = SlackSender(served.events_url, SECRET)
                yield DraftHarness(slack, sender, served.tasks, forge, store)
        finally:
            await remove_source(store, source, prune=True)


async def forge_source(store: Store, forge: FakeForge, *, tenant: str = "acme") -> SourceRow:
    """acme's git source: the fake GitHub's repository, synced from its local path."""
    repo = forge.repo("acme/runbooks")
    settings = {
        "url": repo.url,
        "branch": "main",
        "path": "runbooks",
        "forge": "github",
        "api_url": f"{forge.url}/api/v3",
    }
    return await add_source(
        store,
        tenant=tenant,
        name=f"forge-{uuid.uuid4().hex[:6]}",
        kind="git",
        settings=settings,
        credential={"token": TOKEN},
        webhook_secret={"secret": "s"},
    )


def posts_in(slack: FakeSlack, thread_ts: str) -> list[SlackCall]:
    return [c for c in slack.calls_to("chat.postMessage") if c.body.get("thread_ts") == thread_ts]
