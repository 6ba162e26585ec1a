"""A tenant with owned runbooks, served by the real app against a fake Slack (owners' loop tests).

Each harness has its own tenant and workspace, so owner mappings never leak between tests.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import SecretStr
from slack_sdk.web.async_client import AsyncWebClient

from bot.core.owners.queue import FlushReport, flush_owner_notes
from bot.core.tasks import BackgroundTasks
from bot.slack.owner_messages import SlackOwnerMessenger
from rag import Embedder, RagService, Settings, Store, add_workspace, ingest_limits, ingest_path
from rag.answering.answerers import ExtractiveAnswerer
from tests import credentials
from tests.fakes.slack_api import BOT_USER_ID, FakeSlack, SlackCall, SlackSender
from tests.slack_harness import served_app

SECRET = credentials.SLACK_SIGNING_SECRET
CHANNEL = "C_INCIDENT"
FAILOVER_QUESTION = "Patroni did not fail over by itself, how do I promote a replica by hand?"


FAILOVER_RUNBOOK = """---
title: Postgres primary failover (Patroni)
service: postgres
url: https://wiki.acme.example/runbooks/database/primary-failover
---

# Postgres primary failover (Patroni)

## Symptoms

Alert `PatroniLeaderMissing`: no node holds the leader key, every write fails.

## Manual failover

If Patroni did not fail over by itself, promote a replica by hand: run
`patronictl failover pg-main --candidate pg-main-2` and confirm the new leader with
`patronictl list`.
"""

LATENCY_RUNBOOK = """---
title: High latency on checkout-api
service: checkout-api
---

# High latency on checkout-api

## Diagnosis

Check the p99 latency panel, then the HPA: `kubectl get hpa checkout-api`.
"""


def write_owned_corpus(root: Path, owners: dict[str, str]) -> Path:
    """Two small runbooks, each with the frontmatter ``owner`` given for it (or none)."""
    for relative, text in (
        ("database/primary-failover.md", FAILOVER_RUNBOOK),
        ("checkout/high-api-latency.md", LATENCY_RUNBOOK),
    ):
        if (owner := owners.get(relative)) is not None:
            text = text.replace("---\n", f"---\nowner: {owner}\n", 1)
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


@dataclass
class OwnerHarness:
    tenant: str
    team_id: str
    slack: FakeSlack
    sender: SlackSender
    tasks: BackgroundTasks
    store: Store
    client: AsyncWebClient

    async def ask(self, question: str = FAILOVER_QUESTION) -> tuple[SlackCall, str]:
        """Mention the bot; returns its thread reply and the answer id its buttons carry."""
        ts = f"{time.time():.6f}"
        event = {"type": "app_mention", "user": "U_ALICE", "channel": CHANNEL, "ts": ts}
        await self.sender.event(
            {**event, "text": f"<@{BOT_USER_ID}> {question}"}, team_id=self.team_id
        )
        [post] = await self.slack.wait_for(
            "chat.postMessage", where=lambda c: c.body.get("thread_ts") == ts
        )
        assert await self.tasks.drain(10) == 0
        return post, feedback_value(post).rpartition(":")[0]

    async def vote_down(self, post: SlackCall, answer_id: str, user: str) -> dict[str, Any]:
        """Click 👎 as ``user``; returns the modal the app opened for it."""
        trigger = await self._vote(post, answer_id, user, "down")
        [opened] = await self.slack.wait_for(
            "views.open", where=lambda c: c.body.get("trigger_id") == trigger
        )
        view = opened.body["view"]
        return view if isinstance(view, dict) else {}

    async def vote_up(self, post: SlackCall, answer_id: str, user: str) -> None:
        await self._vote(post, answer_id, user, "up")

    async def _vote(self, post: SlackCall, answer_id: str, user: str, vote: str) -> str:
        """Click a feedback button; returns its trigger id once the click is handled."""
        trigger = f"trigger-{uuid.uuid4().hex[:8]}"
        payload = {
            "type": "block_actions",
            "team": {"id": self.team_id},
            "user": {"id": user, "team_id": self.team_id},
            "api_app_id": "A_RUNBOOK",
            "container": {
                "type": "message",
                "message_ts": post.reply["ts"],
                "channel_id": CHANNEL,
                "is_ephemeral": False,
            },
            "channel": {"id": CHANNEL},
            "response_url": self.slack.response_url(trigger),
            "trigger_id": trigger,
            "actions": [{"action_id": "feedback", "block_id": "f", "value": f"{answer_id}:{vote}"}],
        }
        assert (await self.sender.interaction(payload)).status == 200
        await self.slack.wait_for("response_url", where=lambda c: c.key == trigger)
        assert await self.tasks.drain(10) == 0
        return trigger

    async def submit_reason(
        self, view: dict[str, Any], user: str, reason: str, comment: str | None = None
    ) -> None:
        values: dict[str, Any] = {
            "reason": {"reason": {"type": "radio_buttons", "selected_option": {"value": reason}}},
            "comment": {"comment": {"type": "plain_text_input", "value": comment}},
        }
        payload = {
            "type": "view_submission",
            "team": {"id": self.team_id, "domain": "acme"},
            "user": {"id": user, "team_id": self.team_id},
            "api_app_id": "A_RUNBOOK",
            "trigger_id": "trigger-submit",
            "view": {
                "id": "V1",
                "type": "modal",
                "team_id": self.team_id,
                "callback_id": view["callback_id"],
                "private_metadata": view["private_metadata"],
                "state": {"values": values},
            },
        }
        reply = await self.sender.interaction(payload)
        assert reply.status == 200 and reply.body == ""
        assert await self.tasks.drain(10) == 0

    async def flush(self) -> FlushReport:
        messenger = SlackOwnerMessenger(
            store=self.store, client=self.client, installations=None, api_url=self.slack.base_url
        )
        return await flush_owner_notes(self.store, {"slack": messenger}, batch_minutes=60)

    def owner_messages(self, channel: str) -> list[SlackCall]:
        return [c for c in self.slack.calls_to("chat.postMessage") if c.body["channel"] == channel]


def feedback_value(call: SlackCall) -> str:
    for block in call.body.get("blocks") or []:
        for element in block.get("elements") or []:
            if isinstance(element, dict) and element.get("action_id") == "feedback":
                return str(element["negative_button"]["value"])
    raise AssertionError("no feedback buttons on the card")


@asynccontextmanager
async def owner_harness(
    settings: Settings, store: Store, embedder: Embedder, corpus: Path
) -> AsyncIterator[OwnerHarness]:
    tenant = f"t-{uuid.uuid4().hex[:12]}"
    team_id = f"T{uuid.uuid4().hex[:10].upper()}"
    await ingest_path(
        store, embedder, corpus, tenant=tenant, prune=False, limits=ingest_limits(settings)
    )
    await add_workspace(store, team_id, tenant)
    slack_settings = settings.model_copy(update={"slack_signing_secret": SecretStr(SECRET)})
    service = RagService(
        store=store, embedder=embedder, answerer=ExtractiveAnswerer(), settings=slack_settings
    )
    async with FakeSlack() as slack:
        # The fake's auth.test answers for the team named in the token: Bolt then authorizes
        # requests as this harness's own workspace, as Slack would for its installation.
        client = AsyncWebClient(token=f"xoxb-{team_id}-owners", base_url=slack.base_url)
        async with served_app(
            settings=slack_settings, service=service, store=store, client=client
        ) as served:
            sender = SlackSender(served.events_url, SECRET)
            try:
                yield OwnerHarness(tenant, team_id, slack, sender, served.tasks, store, client)
            finally:
                # Tests share one database and a flush sends every tenant's due notes: a note
                # this harness queued must not be another test's failure (its fake is gone).
                async with store.pool.connection() as conn:
                    await conn.execute(
                        "DELETE FROM owner_notifications WHERE tenant_id = %s", (tenant,)
                    )
