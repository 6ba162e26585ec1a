"""Teams alert posts through Microsoft Graph change notifications (TEAMS_GRAPH_ALERTS=true), over
the real app, queue and worker against a fake Graph and token endpoint and the fake Bot
Connector: the subscription follows the channel's alerts switch, is renewed before it lapses,
Graph's validation handshake and ``clientState`` are honoured, and a post announced by Graph is
answered exactly as one the bot was sent (once, in its thread, silent when resolved)."""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import aiohttp
import pytest_asyncio
from cryptography.fernet import Fernet
from prometheus_client import CollectorRegistry
from pydantic import SecretStr

from bot.core.jobs.metrics import JobMetrics
from bot.core.jobs.queue import JobQueue, JobRequest, JobTenant
from bot.core.jobs.worker import JobHandlers, JobWorker
from bot.core.metrics import BotMetrics
from bot.core.token_cipher import is_sealed
from bot.server import working
from bot.teams.app import build_teams_app
from bot.teams.config import TeamsMode
from bot.teams.graph.config import GRAPH_HOOK_PATH
from bot.teams.graph.messages import GRAPH_MESSAGE
from bot.teams.graph.subscriptions import (
    SUBSCRIPTION_KIND,
    queue_due_subscription_work,
    subscription_row,
)
from bot.teams.incident.channel_requests import ALERT_POST
from bot.teams.incident.channels import set_teams_channel_switch
from bot.teams.tenancy import add_teams_tenant, remove_teams_tenant
from rag import IngestReport, RagService, Settings, Store
from tests import credentials
from tests.adaptive_cards import card_of, rendered_texts
from tests.fakes.bot_connector import FakeBotConnector, Message
from tests.fakes.graph import FakeGraph
from tests.slack_harness import SettlingTasks, forget_unfinished_jobs
from tests.teams_harness import (
    APP_ID,
    WORKFLOWS,
    ServedTeams,
    channel_post,
    mention,
    new_aad_tenant,
    new_id,
    served_teams,
    teams_settings,
)
from tests.test_job_fairness import KIND, Timed, replica
from tests.test_teams_incident_channel import ONCALL, workflows_card

GROUP = "b3f1c2d4-5e6f-4a7b-8c9d-0e1f2a3b4c5d"
RESOURCE = f"/teams/{GROUP}/channels/{ONCALL}/messages"
WORKFLOWS_APP = WORKFLOWS["id"].removeprefix("28:")
LOCAL = TeamsMode("local")


def free_port() -> int:
    # The notification URL names the port before the app is served on it.
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def graph_settings(
    settings: Settings, graph: FakeGraph, connector: FakeBotConnector, port: int
) -> Settings:
    """Local mode (the fake Bot Connector is loopback) with the bot's password, so Graph calls
    carry a client-credentials token from the fake token endpoint; ``connector`` is
    TEAMS_SERVICE_URL, where a Graph-delivered post is answered without a channel history."""
    local = teams_settings(settings, jwks_url="http://127.0.0.1:9/keys", local=True)
    return local.model_copy(
        update={
            "teams_graph_alerts": True,
            "teams_graph_url": graph.graph_url,
            "teams_login_url": graph.login_url,
            "teams_service_url": connector.service_url,
            "teams_app_password": SecretStr(credentials.TEAMS_APP_PASSWORD),
            "public_url": f"http://127.0.0.1:{port}",
            "encryption_keys": SecretStr(Fernet.generate_key().decode()),
        }
    )


def chat_message(
    message_id: str, attachment: dict[str, Any] | None = None, *, text: str = ""
) -> dict[str, Any]:
    """A channel root message as Graph returns it: an app's card post (Workflows), or a
    person's text."""
    message: dict[str, Any] = {
        "id": message_id,
        "replyToId": None,
        "messageType": "message",
        "deletedDateTime": None,
        "channelIdentity": {"teamId": GROUP, "channelId": ONCALL},
        "mentions": [],
    }
    if attachment is None:
        sender = {"user": {"id": "6f1d2c3b-0a9e-4d8c-b7a6-5e4f3d2c1b0a", "displayName": "Dana"}}
        return message | {
            "from": sender,
            "body": {"contentType": "text", "content": text},
            "attachments": [],
        }
    app = {"id": WORKFLOWS_APP, "displayName": "Workflows", "applicationIdentityType": "bot"}
    return message | {
        "from": {"application": app, "user": None},
        "body": {"contentType": "html", "content": '<attachment id="a1"></attachment>'},
        "attachments": [
            {
                "id": "a1",
                "contentType": attachment["contentType"],
                "contentUrl": None,
                "content": json.dumps(attachment["content"]),
            }
        ],
    }


@dataclass
class GraphChannel:
    served: ServedTeams
    connector: FakeBotConnector  # where activities come from (their serviceUrl)
    graph: FakeGraph
    aad: str
    store: Store
    fallback: FakeBotConnector  # TEAMS_SERVICE_URL

    def messages(self) -> list[Message]:
        return self.connector.messages() + self.fallback.messages()

    async def switch(self, on: bool, team: str | None = GROUP) -> None:
        await set_teams_channel_switch(
            self.store, self.aad, ONCALL, "alerts", on, team_id=team, graph=True
        )

    async def reconcile(self) -> None:
        """One round of ``runbook serve``'s subscription schedule, run to the end."""
        await queue_due_subscription_work(self.store, self.served.jobs)
        assert await self.served.tasks.drain(15) == 0

    async def subscribed(self) -> dict[str, Any]:
        await self.switch(True)
        await self.reconcile()
        return self.graph.subscription_for(RESOURCE)

    def post(self, message: dict[str, Any]) -> None:
        self.graph.messages[(GROUP, ONCALL, message["id"])] = message

    async def notify(self, subscription: dict[str, Any], message_id: str, **kw: Any) -> None:
        assert await self.graph.notify(subscription["id"], message_id, **kw) == 202
        assert await self.served.tasks.drain(15) == 0

    def thread(self, message_id: str) -> list[Message]:
        conversation = f"{ONCALL};messageid={message_id}"
        return [m for m in self.messages() if m.conversation == conversation and not m.deleted]

    def fetched(self) -> list[str]:
        return [c.path for c in self.graph.calls if "/messages/" in c.path]


@pytest_asyncio.fixture(loop_scope="session")
async def teams(
    settings: Settings, service: RagService, store: Store, acme_corpus: IngestReport
) -> AsyncIterator[GraphChannel]:
    port = free_port()
    async with (
        FakeBotConnector() as connector,
        FakeBotConnector() as fallback,
        FakeGraph(credentials.TEAMS_APP_PASSWORD) as graph,
    ):
        configured = graph_settings(settings, graph, fallback, port)
        async with served_teams(
            settings=configured, service=service, store=store, mode=LOCAL, port=port
        ) as served:
            aad = new_aad_tenant()
            await add_teams_tenant(store, aad, "acme")
            yield GraphChannel(served, connector, graph, aad, store, fallback)
    assert all(call.authorized for call in graph.calls), "every Graph call carries its token"


def texts(message: Message) -> str:
    return " ".join(rendered_texts(card_of(message.final)))


async def test_switching_alerts_on_subscribes_the_channel_and_off_deletes_the_subscription(
    teams: GraphChannel,
) -> None:
    subscription = await teams.subscribed()
    assert subscription["changeType"] == "created"
    assert subscription["notificationUrl"] == teams.served.url + GRAPH_HOOK_PATH
    assert subscription["includeResourceData"] is False
    assert len(subscription["clientState"]) >= 32
    assert teams.graph.token_requests[-1] == {
        "grant_type": "client_credentials",
        "client_id": APP_ID,
        "scope": "https://graph.microsoft.com/.default",
    }
    assert subscription["tenant"] == teams.aad  # the team's organisation, where consent is
    row = await subscription_row(teams.store, "acme", teams.aad, ONCALL)
    assert row is not None and row.subscription_id == subscription["id"]
    assert row.client_state is not None and is_sealed(row.client_state)
    assert subscription["clientState"] not in json.dumps(row.client_state)

    await teams.switch(False)
    await teams.reconcile()
    assert teams.graph.subscriptions == {}
    assert await subscription_row(teams.store, "acme", teams.aad, ONCALL) is None


async def test_a_channel_switched_on_without_its_team_id_gets_no_subscription(
    teams: GraphChannel,
) -> None:
    await teams.switch(True, team=None)
    await teams.reconcile()
    assert teams.graph.subscriptions == {}


async def test_a_subscription_near_expiry_is_renewed_and_a_lapsed_one_made_anew(
    teams: GraphChannel,
) -> None:
    first = await teams.subscribed()
    await teams.reconcile()  # nothing due yet
    assert "renewals" not in first
    await expire_soon(teams)
    await teams.reconcile()
    assert first["renewals"] == 1
    row = await subscription_row(teams.store, "acme", teams.aad, ONCALL)
    assert row is not None and row.subscription_id == first["id"]
    assert row.expires_at is not None and await later_than(teams, row.expires_at, minutes=40)

    teams.graph.subscriptions.clear()  # Graph let it lapse
    await expire_soon(teams)
    await teams.reconcile()
    second = teams.graph.subscription_for(RESOURCE)
    assert second["id"] != first["id"] and second["clientState"] != first["clientState"]
    row = await subscription_row(teams.store, "acme", teams.aad, ONCALL)
    assert row is not None and row.subscription_id == second["id"]


async def test_the_subscription_of_an_organisation_no_longer_mapped_goes_at_its_renewal(
    teams: GraphChannel,
) -> None:
    await teams.subscribed()
    assert await remove_teams_tenant(teams.store, teams.aad)
    await expire_soon(teams)
    await teams.reconcile()
    assert teams.graph.subscriptions == {}
    assert await subscription_row(teams.store, "acme", teams.aad, ONCALL) is None


async def expire_soon(teams: GraphChannel) -> None:
    async with teams.store.pool.connection() as conn:
        await conn.execute(
            "UPDATE teams_graph_subscriptions SET expires_at = now() + interval '5 minutes' "
            "WHERE aad_tenant_id = %s",
            (teams.aad,),
        )


async def later_than(teams: GraphChannel, moment: object, *, minutes: int) -> bool:
    async with teams.store.pool.connection() as conn:
        cur = await conn.execute("SELECT %s > now() + make_interval(mins => %s)", (moment, minutes))
        row = await cur.fetchone()
    return bool(row and row[0])


async def test_the_validation_handshake_echoes_the_token_as_plain_text(
    teams: GraphChannel,
) -> None:
    token = "Validation: token with spaces & symbols?"
    async with (
        aiohttp.ClientSession() as session,
        session.post(
            teams.served.url + GRAPH_HOOK_PATH, params={"validationToken": token}
        ) as reply,
    ):
        assert reply.status == 200 and reply.content_type == "text/plain"
        assert await reply.text() == token
    await teams.subscribed()  # Graph's own handshake, before it answers the subscription
    [validation] = teams.graph.validations
    assert validation.status == 200 and validation.content_type == "text/plain"
    assert validation.body == validation.token


async def test_notifications_that_do_not_verify_are_ignored(teams: GraphChannel) -> None:
    subscription = await teams.subscribed()
    message_id = new_id()
    teams.post(chat_message(message_id, workflows_card()))
    await teams.notify(subscription, message_id, client_state="not-the-secret")
    await teams.notify(subscription, message_id, client_state="")
    forged = {
        "value": [
            {
                "subscriptionId": "sub-made-up",
                "clientState": subscription["clientState"],
                "changeType": "created",
                "resource": f"teams('{GROUP}')/channels('{ONCALL}')/messages('{message_id}')",
            }
        ]
    }
    async with (
        aiohttp.ClientSession() as session,
        session.post(teams.served.url + GRAPH_HOOK_PATH, json=forged) as reply,
    ):
        assert reply.status == 202
    assert await teams.served.tasks.drain(15) == 0
    assert teams.fetched() == [] and teams.messages() == []
    unverified = teams.served.metrics.registry.get_sample_value(
        "runbook_teams_graph_notifications_total", {"outcome": "unverified"}
    )
    assert unverified == 3


async def test_a_workflows_card_delivered_by_graph_is_answered_once_in_its_thread(
    teams: GraphChannel,
) -> None:
    subscription = await teams.subscribed()
    message_id = new_id()
    teams.post(chat_message(message_id, workflows_card()))
    await teams.notify(subscription, message_id)
    await teams.notify(subscription, message_id)  # Graph delivers again when unsure
    [answer] = teams.thread(message_id)
    assert "Posted automatically" in texts(answer) and "No runbook evidence" not in texts(answer)
    assert "KubePodCrashLooping" in json.dumps(card_of(answer.final))
    assert [m.conversation for m in teams.messages()] == [answer.conversation]
    assert len(teams.fetched()) == 1


async def test_a_post_delivered_both_by_the_bot_connector_and_by_graph_is_answered_once(
    teams: GraphChannel,
) -> None:
    subscription = await teams.subscribed()
    # Two different alerts (namespaces), so the repeat window cannot hide a second answer.
    for namespace, graph_first in (("payments", False), ("inventory", True)):
        card = workflows_card(namespace=namespace)
        activity = channel_post(
            service_url=teams.connector.service_url,
            aad_tenant=teams.aad,
            channel=ONCALL,
            sender=WORKFLOWS,
            attachments=(card,),
        )
        teams.post(chat_message(activity["id"], card))
        for graph_turn in (graph_first, not graph_first):
            if graph_turn:
                await teams.notify(subscription, activity["id"])
            else:
                status, _, _ = await teams.served.send(activity)
                assert status < 300 and await teams.served.tasks.drain(15) == 0
        assert len(teams.thread(activity["id"])) == 1, namespace
        async with teams.store.pool.connection() as conn:
            cur = await conn.execute(
                "SELECT count(*) FROM jobs WHERE kind = %s AND dedupe_key = %s",
                (ALERT_POST, f"teams:{ONCALL}:{activity['id']}"),
            )
            assert await cur.fetchone() == (1,)
    assert len(teams.messages()) == 2
    # Both answers went through the Bot Connector the activity named, the channel's latest.
    assert teams.fallback.messages() == []


async def test_a_graph_post_is_answered_through_the_channels_last_service_url_else_the_setting(
    teams: GraphChannel,
) -> None:
    subscription = await teams.subscribed()
    first = new_id()
    teams.post(chat_message(first, workflows_card()))
    await teams.notify(subscription, first)
    assert [m.conversation for m in teams.fallback.messages()] == [f"{ONCALL};messageid={first}"]
    asked = mention(
        "how do I fail over the payments database?",
        service_url=teams.connector.service_url,
        aad_tenant=teams.aad,
        channel=ONCALL,
    )
    status, _, _ = await teams.served.send(asked)
    assert status < 300 and await teams.served.tasks.drain(15) == 0
    second = new_id()
    teams.post(chat_message(second, workflows_card(namespace="inventory")))
    await teams.notify(subscription, second)
    [answer] = teams.thread(second)
    assert answer in teams.connector.messages() and len(teams.fallback.messages()) == 1


async def test_resolved_alerts_replies_and_chatter_delivered_by_graph_get_nothing(
    teams: GraphChannel,
) -> None:
    subscription = await teams.subscribed()
    resolved, chatter = new_id(), new_id()
    teams.post(chat_message(resolved, workflows_card("resolved")))
    teams.post(chat_message(chatter, text="[FIRING:1] is what the old template said, right?"))
    await teams.notify(subscription, resolved)
    await teams.notify(subscription, chatter)
    await teams.notify(subscription, new_id(), reply_to=resolved)  # never even fetched
    assert len(teams.fetched()) == 2
    assert teams.messages() == []


async def test_a_replica_without_teams_leaves_a_graph_message_job_queued_for_one_that_serves_it(
    settings: Settings, service: RagService, store: Store, acme_corpus: IngestReport
) -> None:
    """A rolling upgrade: the old replica (no Teams handlers) never claims the new kinds."""
    await forget_unfinished_jobs(store)
    aad = new_aad_tenant()
    await add_teams_tenant(store, aad, "acme")
    async with FakeBotConnector() as connector, FakeGraph(credentials.TEAMS_APP_PASSWORD) as graph:
        quick = graph_settings(settings, graph, connector, free_port())
        quick = quick.model_copy(update={"job_poll_s": 0.05})
        await set_teams_channel_switch(
            store, aad, ONCALL, "alerts", True, team_id=GROUP, graph=True
        )
        message_id = new_id()
        graph.messages[(GROUP, ONCALL, message_id)] = chat_message(message_id, workflows_card())
        payload = {
            "tenant": "acme",
            "aad_tenant": aad,
            "team_id": GROUP,
            "channel_id": ONCALL,
            "message_id": message_id,
        }
        keys = [f"test:{message_id}", f"test:subscription:{message_id}"]
        async with replica(store, quick, {KIND: Timed(0.0)}) as old:
            async with old.intake() as conn:
                tenant = JobTenant(tenant_id="acme")
                assert await old.insert(conn, JobRequest(GRAPH_MESSAGE, keys[0], payload, tenant))
                subscription = {"tenant": "acme", "aad_tenant": aad, "channel_id": ONCALL}
                job = JobRequest(SUBSCRIPTION_KIND, keys[1], subscription, tenant)
                assert await old.insert(conn, job)
            old.new_work.set()
            await asyncio.sleep(1.0)  # many claims by a worker that does not serve the kinds
            assert [await job_states(store, key) for key in keys] == [[("queued", 0)]] * 2
        jobs = await JobQueue.open(store, quick)
        handlers, tasks = JobHandlers(), SettlingTasks(jobs)
        build_teams_app(
            settings=quick,
            mode=LOCAL,
            service=service,
            store=store,
            tasks=tasks,
            metrics=BotMetrics(),
            jobs=jobs,
            job_handlers=handlers,
        )
        worker = JobWorker(jobs, handlers, tasks=tasks, metrics=JobMetrics(CollectorRegistry()))
        try:
            async with working(worker, tasks, drain_s=10):
                thread = f"{ONCALL};messageid={message_id}"
                [answer] = await connector.wait_for_messages(thread, 1)
                # The subscription job ran too; Graph could not reach this replica's hook
                # (nothing serves it here), so it is recorded as failing, not lost.
                assert await tasks.drain(15) == 0
        finally:
            await jobs.close()
    assert [await job_states(store, key) for key in keys] == [[("done", 1)]] * 2
    assert "Posted automatically" in " ".join(rendered_texts(card_of(answer.final)))
    row = await subscription_row(store, "acme", aad, ONCALL)
    assert row is not None and row.subscription_id is None and row.last_error


async def job_states(store: Store, key: str) -> list[tuple[str, int]]:
    async with store.pool.connection() as conn:
        cur = await conn.execute("SELECT state, attempts FROM jobs WHERE dedupe_key = %s", (key,))
        return [(row[0], row[1]) for row in await cur.fetchall()]


def notification_for(
    subscription: dict[str, Any], message_id: str, client_state: str | None = None
) -> dict[str, Any]:
    """One change notification for a new root message, as Graph sends it."""
    resource = f"teams('{GROUP}')/channels('{ONCALL}')/messages('{message_id}')"
    return {
        "subscriptionId": subscription["id"],
        "changeType": "created",
        "clientState": subscription["clientState"] if client_state is None else client_state,
        "resource": resource,
        "resourceData": {"id": message_id, "@odata.type": "#Microsoft.Graph.chatMessage"},
        "tenantId": subscription["tenant"],
    }


async def post_notifications(teams: GraphChannel, body: bytes) -> int:
    async with (
        aiohttp.ClientSession() as session,
        session.post(
            teams.served.url + GRAPH_HOOK_PATH,
            data=body,
            headers={"Content-Type": "application/json"},
        ) as reply,
    ):
        return reply.status


async def subscribed_alone(teams: GraphChannel) -> dict[str, Any]:
    """This test's subscription; rows an earlier test left (another organisation's) would get
    one on the same channel from this test's fake Graph."""
    async with teams.store.pool.connection() as conn:
        await conn.execute(
            "DELETE FROM teams_graph_subscriptions WHERE aad_tenant_id <> %s", (teams.aad,)
        )
    return await teams.subscribed()


def notifications_total(teams: GraphChannel) -> float:
    registry = teams.served.metrics.registry
    return sum(
        registry.get_sample_value("runbook_teams_graph_notifications_total", {"outcome": o}) or 0
        for o in ("unverified", "queued", "duplicate", "reply", "other")
    )


async def test_a_verified_notification_in_a_900_kb_body_is_read_whole_and_answered(
    teams: GraphChannel,
) -> None:
    subscription = await subscribed_alone(teams)
    message_id = new_id()
    teams.post(chat_message(message_id, workflows_card()))
    notification = notification_for(subscription, message_id)
    # Rich notifications carry resource data; here padding brings the body near the cap.
    notification["resourceData"]["padding"] = "x" * 900_000
    body = json.dumps({"value": [notification]}).encode()
    assert 900_000 < len(body) < 1_000_000

    status = await post_notifications(teams, body)
    assert await teams.served.tasks.drain(15) == 0

    assert status == 202
    [answer] = teams.thread(message_id)
    assert "KubePodCrashLooping" in json.dumps(card_of(answer.final))


async def test_a_request_of_3000_forged_notifications_is_refused_before_any_is_looked_up(
    teams: GraphChannel,
) -> None:
    forged = [{"subscriptionId": f"s{n}", "clientState": "x"} for n in range(3000)]
    body = json.dumps({"value": forged}).encode()
    assert len(body) < 150_000
    before = notifications_total(teams)

    status = await post_notifications(teams, body)

    assert status == 413
    assert notifications_total(teams) == before  # not one of them was taken


async def test_many_notifications_of_one_subscription_queue_each_message_once(
    teams: GraphChannel,
) -> None:
    subscription = await subscribed_alone(teams)
    message_id = new_id()
    teams.post(chat_message(message_id, workflows_card()))
    forged = [notification_for(subscription, new_id(), client_state="wrong") for _ in range(500)]
    real = [notification_for(subscription, message_id)] * 3
    lone_surrogate = notification_for(subscription, new_id(), client_state="\ud800")
    body = json.dumps({"value": [*forged, *real, lone_surrogate]}).encode()

    status = await post_notifications(teams, body)
    assert await teams.served.tasks.drain(15) == 0

    assert status == 202
    [answer] = teams.thread(message_id)
    assert len(teams.fetched()) == 1
    registry = teams.served.metrics.registry
    sample = registry.get_sample_value
    assert sample("runbook_teams_graph_notifications_total", {"outcome": "unverified"}) == 501
    assert sample("runbook_teams_graph_notifications_total", {"outcome": "duplicate"}) == 2
    assert answer.conversation.endswith(message_id)
