"""The real Teams app served over HTTP on 127.0.0.1, and activities shaped as Teams sends them.

``served_teams`` builds the app exactly as ``runbook serve`` does (local mode or production
security) against a fake Bot Connector and a fake key endpoint.
"""

from __future__ import annotations

import itertools
import json
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import aiohttp
from pydantic import SecretStr

from bot.core.jobs.metrics import JobMetrics
from bot.core.jobs.queue import JobQueue
from bot.core.jobs.worker import JobHandlers, JobWorker
from bot.core.metrics import BotMetrics
from bot.server import build_web_app, serving, working
from bot.teams.app import TeamsApp, build_teams_app
from bot.teams.config import TeamsMode, teams_mode
from bot.teams.routes import MESSAGES_PATH, teams_routes
from rag import RagService, Settings, Store
from tests import credentials
from tests.slack_harness import SettlingTasks, forget_unfinished_jobs

APP_ID = "7e2a1b3c-4d5e-4f60-8a71-92b3c4d5e6f7"
BOT = {"id": f"28:{APP_ID}", "name": "Runbook Bot"}
USER = {"id": "29:oncall", "name": "On-call", "aadObjectId": "6f1d2c3b-0a9e-4d8c-b7a6-5e4f3d2c1b0a"}
TEAM = "19:team@thread.tacv2"
CHANNEL = "19:incidents@thread.tacv2"
ALERTS = "19:alerts@thread.tacv2"
ADAPTIVE = "application/vnd.microsoft.card.adaptive"
_IDS = itertools.count(int(time.time() * 1000))


@dataclass(frozen=True)
class ServedTeams:
    url: str
    messages_url: str
    app: TeamsApp
    tasks: SettlingTasks
    metrics: BotMetrics
    jobs: JobQueue

    async def send(
        self, activity: dict[str, Any], *, token: str | None = None, header: str | None = None
    ) -> tuple[int, str, float]:
        """POST an activity; returns (status, body, seconds until the response)."""
        headers = {"Content-Type": "application/json"}
        if token is not None:
            headers["Authorization"] = f"Bearer {token}"
        if header is not None:
            headers["Authorization"] = header
        started = time.monotonic()
        async with (
            aiohttp.ClientSession() as session,
            session.post(self.messages_url, data=json.dumps(activity), headers=headers) as response,
        ):
            return response.status, await response.text(), time.monotonic() - started


def teams_settings(settings: Settings, *, jwks_url: str, local: bool) -> Settings:
    update: dict[str, Any] = {"teams_app_id": APP_ID, "teams_jwks_url": jwks_url}
    if local:
        update["teams_allow_unauthenticated"] = True
    else:
        update["teams_app_password"] = SecretStr(credentials.TEAMS_APP_PASSWORD)
        update["teams_tenant_id"] = "11111111-2222-4333-8444-555555555555"
    return settings.model_copy(update=update)


@asynccontextmanager
async def served_teams(
    *,
    settings: Settings,
    service: RagService,
    store: Store,
    mode: TeamsMode | None = None,
    port: int = 0,
) -> AsyncIterator[ServedTeams]:
    """The app and its job worker, as ``runbook serve`` runs them (``mode``: the settings'
    own unless given; ``port``: 0 picks one). On exit every job must have finished: a test
    never leaves work behind."""
    metrics, handlers = BotMetrics(), JobHandlers()
    await forget_unfinished_jobs(store)
    jobs = await JobQueue.open(store, settings)
    tasks = SettlingTasks(jobs)
    try:
        app = build_teams_app(
            settings=settings,
            mode=mode or teams_mode(settings),
            service=service,
            store=store,
            tasks=tasks,
            metrics=metrics,
            jobs=jobs,
            job_handlers=handlers,
        )
        worker = JobWorker(jobs, handlers, tasks=tasks, metrics=JobMetrics(metrics.registry))
        web_app = build_web_app(surfaces=[teams_routes(app)])
        async with (
            working(worker, tasks, drain_s=settings.drain_timeout_s),
            serving(web_app, host="127.0.0.1", port=port) as bound,
        ):
            url = f"http://127.0.0.1:{bound}"
            yield ServedTeams(url, url + MESSAGES_PATH, app, tasks, metrics, jobs)
            assert await tasks.drain(10) == 0
    finally:
        await jobs.close()
        await forget_unfinished_jobs(store)


def new_id() -> str:
    return str(next(_IDS))


def new_aad_tenant() -> str:
    return str(uuid.uuid4())


def _envelope(
    kind: str, conversation: dict[str, Any], service_url: str, **fields: Any
) -> dict[str, Any]:
    tenant = conversation["tenantId"]
    channel_data: dict[str, Any] = {"tenant": {"id": tenant}}
    if conversation.get("conversationType") == "channel":
        channel = conversation["id"].split(";")[0]
        channel_data.update(team={"id": TEAM}, channel={"id": channel})
    return {
        "type": kind,
        "channelId": "msteams",
        "serviceUrl": service_url,
        "from": dict(USER),
        "recipient": dict(BOT),
        "conversation": conversation,
        "channelData": channel_data,
        "locale": "en-US",
        **fields,
    }


def mention(
    question: str,
    *,
    service_url: str,
    aad_tenant: str,
    channel: str = CHANNEL,
    root: str | None = None,
    extra_entities: tuple[dict[str, Any], ...] = (),
) -> dict[str, Any]:
    """A channel post @mentioning the bot (its own thread root), or a reply in thread ``root``."""
    activity_id = new_id()
    conversation = {
        "id": f"{channel};messageid={root or activity_id}",
        "conversationType": "channel",
        "isGroup": True,
        "tenantId": aad_tenant,
    }
    at = f"<at>{BOT['name']}</at>"
    entities = [{"type": "mention", "text": at, "mentioned": dict(BOT)}, *extra_entities]
    activity = _envelope(
        "message",
        conversation,
        service_url,
        id=activity_id,
        text=f"{at} {question}" if question else f"{at}\r\n",
        textFormat="plain",
        entities=entities,
    )
    if root:
        activity["replyToId"] = root
    return activity


def personal(question: str, *, service_url: str, aad_tenant: str, chat: str) -> dict[str, Any]:
    conversation = {"id": chat, "conversationType": "personal", "tenantId": aad_tenant}
    return _envelope("message", conversation, service_url, id=new_id(), text=question)


def invoke(
    name: str,
    value: dict[str, Any],
    *,
    service_url: str,
    aad_tenant: str,
    conversation_id: str,
    reply_to: str | None = None,
    user: dict[str, Any] | None = None,
) -> dict[str, Any]:
    conversation = {
        "id": conversation_id,
        "conversationType": "channel",
        "isGroup": True,
        "tenantId": aad_tenant,
    }
    activity = _envelope(
        "invoke",
        conversation,
        service_url,
        id=f"f:{uuid.uuid4().int % 10**19}",
        name=name,
        value=value,
    )
    if user is not None:
        activity["from"] = user
    if reply_to:
        activity["replyToId"] = reply_to
    return activity


def feedback_value(answer_id: str, vote: str) -> dict[str, Any]:
    action = {
        "type": "Action.Execute",
        "verb": "feedback",
        "data": {"answer_id": answer_id, "vote": vote},
    }
    return {"action": action, "trigger": "manual"}


def alertmanager_payload(message_id: str, *, hostile: str = "") -> dict[str, Any]:
    """An Alertmanager post as ``messagePayload``: HTML body plus a card attachment whose
    content is a JSON string (Teams sends both shapes)."""
    card = {
        "type": "AdaptiveCard",
        "version": "1.4",
        "body": [
            {"type": "TextBlock", "text": "[FIRING:1] KubePodCrashLooping (payments prod-eu-1)"},
            {"type": "TextBlock", "text": f"{hostile} Pod payments/checkout-api is crash looping."},
            {
                "type": "FactSet",
                "facts": [
                    {"title": "alertname", "value": "KubePodCrashLooping"},
                    {"title": "namespace", "value": "payments"},
                ],
            },
        ],
        "actions": [{"type": "Action.OpenUrl", "title": "Open", "url": "https://am.example.net/"}],
    }
    body = (
        "<p><strong>[FIRING:1] KubePodCrashLooping</strong> (payments prod-eu-1)</p>"
        f"<p>{hostile} Pod <code>payments/checkout-api</code> is crash looping</p>"
        '<attachment id="a1"></attachment>'
    )
    return {
        "id": message_id,
        "replyToId": None,
        "messageType": "message",
        "body": {"contentType": "html", "content": body},
        "attachments": [{"id": "a1", "contentType": ADAPTIVE, "content": json.dumps(card)}],
        "from": {"application": {"id": "alertmanager", "displayName": "Alertmanager"}},
    }


WORKFLOWS = {"id": "28:0f6d2b7a-4c3e-4a1f-9b8d-6e5c4a3b2d1f", "name": "Workflows"}
O365_CONNECTOR = "application/vnd.microsoft.teams.card.o365connector"


def channel_post(
    *,
    service_url: str,
    aad_tenant: str,
    channel: str,
    text: str | None = None,
    attachments: tuple[dict[str, Any], ...] = (),
    sender: dict[str, Any] | None = None,
    root: str | None = None,
    bare: bool = False,
    mentioned: tuple[dict[str, Any], ...] = (),
) -> dict[str, Any]:
    """A channel message that does not mention the bot, as resource-specific consent delivers
    it: a root post (``;messageid=`` its own id, or the bare channel id with ``bare``) or, with
    ``root``, a reply in that thread. ``sender`` None: a person; ``mentioned``: people the text
    addresses (``<at>`` tags and mention entities)."""
    activity_id = new_id()
    conversation = {
        "id": channel if bare else f"{channel};messageid={root or activity_id}",
        "conversationType": "channel",
        "isGroup": True,
        "tenantId": aad_tenant,
    }
    fields: dict[str, Any] = {"id": activity_id, "attachments": list(attachments), "entities": []}
    if text is not None:
        tags = "".join(f"<at>{person['name']}</at> " for person in mentioned)
        fields.update(text=tags + text, textFormat="plain")
        fields["entities"] = [
            {"type": "mention", "text": f"<at>{p['name']}</at>", "mentioned": dict(p)}
            for p in mentioned
        ]
    activity = _envelope("message", conversation, service_url, **fields)
    activity["from"] = dict(sender or USER)
    if root:
        activity["replyToId"] = root
    return activity
