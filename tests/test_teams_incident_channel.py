"""The Teams incident channel over the real app, queue and worker against a fake Bot Connector:
alert posts answered unprompted in channels that switched alerts on (each alert shape Teams
carries), silence for everything else, Mute, and thread follow-ups with Stop following."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import pytest
import pytest_asyncio
from microsoft_agents.activity import Activity
from prometheus_client import CollectorRegistry

from bot.core.alerts.channel_settings import set_channel_switch
from bot.core.jobs.metrics import JobMetrics
from bot.core.jobs.queue import JobQueue, JobRequest
from bot.core.jobs.worker import JobHandlers, JobWorker
from bot.core.metrics import BotMetrics
from bot.server import working
from bot.teams.alerts import read_activity
from bot.teams.app import build_teams_app
from bot.teams.bot import job_tenant
from bot.teams.config import teams_mode
from bot.teams.incident.channel_requests import ALERT_POST, ChannelPostRequest
from bot.teams.tenancy import add_teams_tenant
from rag import IngestReport, RagService, Settings, Store
from tests.adaptive_cards import activity_problems, card_of, rendered_texts
from tests.fakes.bot_connector import FakeBotConnector, Message
from tests.slack_harness import SettlingTasks, forget_unfinished_jobs
from tests.teams_harness import (
    ADAPTIVE,
    BOT,
    O365_CONNECTOR,
    WORKFLOWS,
    ServedTeams,
    channel_post,
    invoke,
    mention,
    new_aad_tenant,
    served_teams,
    teams_settings,
)
from tests.test_job_fairness import KIND, Timed, replica

ONCALL = "19:oncall-alerts@thread.tacv2"
INCIDENT = "19:incident@thread.tacv2"
CONNECTOR = {"id": "28:9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d", "name": "Alertmanager"}
PROMTEAMS = {"id": "28:3c2b1a0f-9e8d-4c7b-a6f5-4e3d2c1b0a9f", "name": "prometheus-msteams"}
GRAFANA = {"id": "28:5e4d3c2b-1a0f-4e9d-8c7b-6a5f4e3d2c1b", "name": "Grafana"}
PAGERDUTY = {"id": "28:7a6b5c4d-3e2f-4a1b-9c8d-7e6f5a4b3c2d", "name": "PagerDuty"}
DANA = {"id": "29:dana", "name": "Dana Whitfield"}
QUESTION = "how do I fail over the payments database?"


@dataclass
class Channel:
    served: ServedTeams
    connector: FakeBotConnector
    aad: str
    store: Store

    def post(self, channel: str = ONCALL, **fields: Any) -> dict[str, Any]:
        return channel_post(
            service_url=self.connector.service_url, aad_tenant=self.aad, channel=channel, **fields
        )

    async def switch(self, channel: str, switch: str, on: bool = True) -> None:
        await set_channel_switch(self.store, "acme", self.aad, channel, switch, on)  # type: ignore[arg-type]

    async def deliver(self, activity: dict[str, Any]) -> list[Message]:
        """Send it, let every job finish, and return the messages of its thread."""
        status, _, seconds = await self.served.send(activity)
        assert 200 <= status < 300 and seconds < 3
        assert await self.served.tasks.drain(15) == 0
        root = activity["conversation"]["id"].split(";")[0] + ";messageid="
        root += activity.get("replyToId") or activity["id"]
        return self.connector.live_messages(root)

    def posted(self) -> list[Message]:
        return self.connector.messages()


@pytest_asyncio.fixture(loop_scope="session")
async def teams(
    settings: Settings, service: RagService, store: Store, acme_corpus: IngestReport
) -> AsyncIterator[Channel]:
    async with FakeBotConnector() as connector:
        local = teams_settings(settings, jwks_url="http://127.0.0.1:9/keys", local=True)
        async with served_teams(settings=local, service=service, store=store) as served:
            aad = new_aad_tenant()
            await add_teams_tenant(store, aad, "acme")
            yield Channel(served, connector, aad, store)
        problems = [
            problem
            for call in connector.calls
            if call.body is not None
            for problem in activity_problems(call.body, call.size)
        ]
        assert problems == []


# --- the alert shapes Teams carries -------------------------------------------------------


def am_subject(status: str, namespace: str) -> str:
    head = "[FIRING:1]" if status == "firing" else "[RESOLVED]"
    return f"{head} KubePodCrashLooping {namespace} (CrashLoopBackOff prod-eu-1 payments-api)"


def am_text(status: str, namespace: str) -> str:
    return (
        f"\n# Alerts {status.title()}:\n\nLabels:\n  - alertname = KubePodCrashLooping\n"
        f"  - cluster = prod-eu-1\n  - container = payments-api\n  - namespace = {namespace}\n"
        f"  - pod = payments-api-7d9f8c-xk2lp\n  - severity = warning\n\nAnnotations:\n"
        f'  - description = Pod {namespace}/payments-api-7d9f8c-xk2lp is in waiting state (reason: "CrashLoopBackOff").\n'  # noqa: E501
        "  - runbook_url = https://runbooks.example.net/kubepodcrashlooping\n"
        "  - summary = Pod is crash looping.\n"
    )


def workflows_card(status: str = "firing", namespace: str = "payments") -> dict[str, Any]:
    """msteamsv2_configs through a Workflows webhook: an Adaptive Card 1.2 posted by Workflows."""
    card = {
        "type": "AdaptiveCard",
        "version": "1.2",
        "body": [
            {"type": "TextBlock", "text": am_subject(status, namespace), "weight": "Bolder"},
            {"type": "TextBlock", "text": am_text(status, namespace), "wrap": True},
        ],
        "msteams": {"width": "full"},
    }
    return {"contentType": ADAPTIVE, "contentUrl": None, "content": card}


def message_card(status: str = "firing", namespace: str = "payments") -> dict[str, Any]:
    """msteams_configs through an incoming webhook: a connector MessageCard."""
    subject = am_subject(status, namespace)
    content = {
        "@context": "http://schema.org/extensions",
        "type": "MessageCard",
        "title": subject,
        "summary": subject,
        "text": am_text(status, namespace),
        "themeColor": "8C1A1A",
    }
    return {"contentType": O365_CONNECTOR, "content": content}


def prometheus_msteams_card(status: str = "firing", namespace: str = "payments") -> dict[str, Any]:
    """prometheus-msteams' default card: the state in the title, the name only in facts."""
    facts = [
        {},
        {"name": "runbook_url", "value": "https://runbooks.example.net/kubepodcrashlooping"},
        {"name": "summary", "value": "Pod is crash looping."},
        {"name": "alertname", "value": "KubePodCrashLooping"},
        {"name": "container", "value": "payments-api"},
        {"name": "namespace", "value": namespace},
        {"name": "reason", "value": "CrashLoopBackOff"},
    ]
    content = {
        "@type": "MessageCard",
        "@context": "http://schema.org/extensions",
        "summary": "Pod is crash looping.",
        "title": f"Prometheus Alert ({status.title()})",
        "sections": [
            {
                "activityTitle": f"[Pod {namespace}/payments-api is crash looping.](https://am.example.net)",
                "facts": facts,
                "markdown": True,
            }
        ],
    }
    return {"contentType": O365_CONNECTOR, "content": content}


def grafana_card() -> dict[str, Any]:
    """Grafana's Teams contact point: an Adaptive Card titled like Alertmanager's subject."""
    card = {
        "type": "AdaptiveCard",
        "version": "1.4",
        "body": [
            {"type": "TextBlock", "text": "[FIRING:1] KubePodCrashLooping (payments grafana)"},
            {
                "type": "TextBlock",
                "text": "**Firing**\n\nValue: B=6\nLabels:\n - alertname = KubePodCrashLooping\n"
                " - namespace = payments\n - container = payments-worker\n"
                "Annotations:\n - summary = Container payments-worker restarts in a loop.",
            },
        ],
        "actions": [{"type": "Action.OpenUrl", "title": "View alert", "url": "https://g.example"}],
    }
    return {"contentType": ADAPTIVE, "content": card}


def pagerduty_card() -> dict[str, Any]:
    """PagerDuty's Teams app: the incident's state and number first, its service as a fact."""
    card = {
        "type": "AdaptiveCard",
        "version": "1.4",
        "body": [
            {"type": "TextBlock", "text": "Triggered #48213: KubePodCrashLooping checkout-api"},
            {
                "type": "FactSet",
                "facts": [
                    {"title": "Service", "value": "payments"},
                    {"title": "Urgency", "value": "High"},
                ],
            },
            {"type": "TextBlock", "text": "Pod checkout-api keeps restarting (CrashLoopBackOff)."},
        ],
        "actions": [{"type": "Action.Execute", "verb": "ack", "title": "Acknowledge"}],
    }
    return {"contentType": ADAPTIVE, "content": card}


SHAPES = {
    "workflows": (WORKFLOWS, workflows_card),
    "msteams_configs": (CONNECTOR, message_card),
    "prometheus_msteams": (PROMTEAMS, prometheus_msteams_card),
    "grafana": (GRAFANA, grafana_card),
    "pagerduty": (PAGERDUTY, pagerduty_card),
}


def texts(message: Message) -> str:
    return " ".join(rendered_texts(card_of(message.final)))


def actions(message: Message) -> list[str]:
    return [a.get("verb", "") for a in card_of(message.final).get("actions", [])]


@pytest.mark.parametrize("shape", sorted(SHAPES))
async def test_each_alert_shape_gets_one_automatic_answer_in_its_thread(
    teams: Channel, shape: str
) -> None:
    sender, card = SHAPES[shape]
    await teams.switch(ONCALL, "alerts")
    [answer] = await teams.deliver(teams.post(sender=sender, attachments=(card(),)))
    shown = texts(answer)
    assert "Posted automatically" in shown and "No runbook evidence" not in shown
    assert "KubePodCrashLooping" in json.dumps(card_of(answer.final))
    assert "muteAlert" in actions(answer)
    assert [m.conversation for m in teams.posted()] == [answer.conversation]


async def test_an_alert_posted_with_the_bare_channel_id_is_answered_in_its_own_thread(
    teams: Channel,
) -> None:
    await teams.switch(ONCALL, "alerts")
    post = teams.post(sender=CONNECTOR, attachments=(message_card(),), bare=True)
    [answer] = await teams.deliver(post)
    assert answer.conversation == f"{ONCALL};messageid={post['id']}"


async def test_a_channel_without_alerts_switched_on_gets_nothing(teams: Channel) -> None:
    await teams.switch(ONCALL, "follow_ups")  # a row, but alerts stay off
    assert await teams.deliver(teams.post(sender=WORKFLOWS, attachments=(workflows_card(),))) == []
    await teams.switch(ONCALL, "alerts", on=True)
    await teams.switch(ONCALL, "alerts", on=False)
    assert await teams.deliver(teams.post(sender=WORKFLOWS, attachments=(workflows_card(),))) == []
    assert teams.posted() == []


async def test_resolved_repeated_chatter_own_and_uncovered_posts_get_nothing(
    teams: Channel,
) -> None:
    await teams.switch(ONCALL, "alerts")
    assert len(await teams.deliver(teams.post(sender=WORKFLOWS, attachments=(workflows_card(),))))
    posted = len(teams.posted())
    silent = [
        teams.post(sender=WORKFLOWS, attachments=(workflows_card(),)),  # the same alert again
        teams.post(sender=WORKFLOWS, attachments=(workflows_card("resolved"),)),
        teams.post(sender=PROMTEAMS, attachments=(prometheus_msteams_card("resolved"),)),
        teams.post(text="lunch?"),
        teams.post(text="[FIRING:1] is what the old template said, right?"),
        teams.post(sender=dict(BOT), attachments=(workflows_card(namespace="inventory"),)),
        teams.post(
            sender=WORKFLOWS,
            attachments=(
                {
                    "contentType": ADAPTIVE,
                    "content": {
                        "type": "AdaptiveCard",
                        "version": "1.2",
                        "body": [
                            {"type": "TextBlock", "text": "[FIRING:1] NebulaReactorMeltdown lab"},
                            {
                                "type": "TextBlock",
                                "text": "Labels:\n  - alertname = NebulaReactorMeltdown\n"
                                "  - instance = reactor-07.lab.example.net:9100\n"
                                "Annotations:\n  - summary = Reactor core temperature high.",
                            },
                        ],
                    },
                },
            ),
        ),
    ]
    for post in silent:
        assert await teams.deliver(post) == [], post.get("text") or post["from"]["name"]
    assert len(teams.posted()) == posted


async def test_mute_silences_that_alert_in_the_channel_until_alerts_are_switched_on_again(
    teams: Channel,
) -> None:
    await teams.switch(ONCALL, "alerts")
    [answer] = await teams.deliver(teams.post(sender=WORKFLOWS, attachments=(workflows_card(),)))
    answer_id = next(
        a["data"]["answer_id"] for a in card_of(answer.final)["actions"] if a["verb"] == "muteAlert"
    )
    click = invoke(
        "adaptiveCard/action",
        {
            "action": {
                "type": "Action.Execute",
                "verb": "muteAlert",
                "data": {"answer_id": answer_id},
            }
        },
        service_url=teams.connector.service_url,
        aad_tenant=teams.aad,
        conversation_id=answer.conversation,
    )
    status, body, _ = await teams.served.send(click)
    assert status == 200 and "Muted: I won't answer KubePodCrashLooping" in body
    # Another namespace is another fingerprint, outside any repeat window; muted by name.
    other = teams.post(sender=WORKFLOWS, attachments=(workflows_card(namespace="inventory"),))
    assert await teams.deliver(other) == []
    await teams.switch(ONCALL, "alerts")  # switching on again lifts the mutes
    again = teams.post(sender=WORKFLOWS, attachments=(workflows_card(namespace="billing"),))
    assert len(await teams.deliver(again)) == 1


async def test_alert_posts_ride_the_queue_once_per_activity(teams: Channel) -> None:
    await teams.switch(ONCALL, "alerts")
    post = teams.post(sender=WORKFLOWS, attachments=(workflows_card(),))
    for _ in range(3):  # Teams redelivers what it thinks was not taken
        status, _, _ = await teams.served.send(post)
        assert 200 <= status < 300
    assert await teams.served.tasks.drain(15) == 0
    async with teams.store.pool.connection() as conn:
        cur = await conn.execute(
            "SELECT kind, state FROM jobs WHERE dedupe_key = %s",
            (f"teams:{ONCALL}:{post['id']}",),
        )
        assert await cur.fetchall() == [(ALERT_POST, "done")]
    assert len(teams.posted()) == 1


# --- thread follow-ups ---------------------------------------------------------------------


async def asked_thread(teams: Channel) -> tuple[str, Message]:
    """A mention in the incident channel and its answer: a thread the bot follows."""
    asked = mention(
        QUESTION, service_url=teams.connector.service_url, aad_tenant=teams.aad, channel=INCIDENT
    )
    [answer] = await teams.deliver(asked)
    return asked["id"], answer


async def test_a_question_in_a_thread_the_bot_answered_gets_an_answer_there(
    teams: Channel,
) -> None:
    await teams.switch(INCIDENT, "follow_ups")
    root, first = await asked_thread(teams)
    reply = teams.post(INCIDENT, text="what about the replica, how do I check it?", root=root)
    messages = await teams.deliver(reply)
    assert len(messages) == 2
    [follow_up] = [m for m in messages if m.id != first.id]
    assert "stopFollowing" in actions(follow_up)
    assert "No runbook evidence" not in texts(follow_up)


async def test_statements_thanks_and_replies_to_someone_else_get_nothing(teams: Channel) -> None:
    await teams.switch(INCIDENT, "follow_ups")
    root, _ = await asked_thread(teams)
    quiet = [
        teams.post(INCIDENT, text="thanks, restarting now", root=root),
        teams.post(INCIDENT, text="can you check the replica lag?", root=root, mentioned=(DANA,)),
        teams.post(INCIDENT, text="what about the replica?", root=root, sender=dict(BOT)),
    ]
    for post in quiet:
        assert len(await teams.deliver(post)) == 1, post["text"]


async def test_follow_ups_need_the_switch_and_a_thread_the_bot_answered(teams: Channel) -> None:
    root, _ = await asked_thread(teams)
    question = "what about the replica, how do I check it?"
    assert len(await teams.deliver(teams.post(INCIDENT, text=question, root=root))) == 1
    await teams.switch(INCIDENT, "follow_ups")
    top = teams.post(INCIDENT, text="the replica is lagging")
    assert await teams.deliver(top) == []
    assert await teams.deliver(teams.post(INCIDENT, text=question, root=top["id"])) == []


async def test_stop_following_ends_follow_ups_in_that_thread(teams: Channel) -> None:
    await teams.switch(INCIDENT, "follow_ups")
    root, first = await asked_thread(teams)
    reply = teams.post(INCIDENT, text="what about the replica, how do I check it?", root=root)
    [follow_up] = [m for m in await teams.deliver(reply) if m.id != first.id]
    answer_id = next(
        a["data"]["answer_id"]
        for a in card_of(follow_up.final)["actions"]
        if a["verb"] == "stopFollowing"
    )
    click = invoke(
        "adaptiveCard/action",
        {
            "action": {
                "type": "Action.Execute",
                "verb": "stopFollowing",
                "data": {"answer_id": answer_id},
            }
        },
        service_url=teams.connector.service_url,
        aad_tenant=teams.aad,
        conversation_id=follow_up.conversation,
    )
    status, body, _ = await teams.served.send(click)
    assert status == 200 and "stop answering in this thread" in body
    again = teams.post(INCIDENT, text="how do I check replication lag?", root=root)
    assert len(await teams.deliver(again)) == 2


async def test_a_follow_up_shows_typing_at_once_and_no_placeholder(teams: Channel) -> None:
    await teams.switch(INCIDENT, "follow_ups")
    root, _ = await asked_thread(teams)
    before = len(teams.connector.calls)
    reply = teams.post(INCIDENT, text="what about the replica, how do I check it?", root=root)
    await teams.deliver(reply)
    kinds = [c.kind for c in teams.connector.calls[before:]]
    assert kinds == ["typing", "reply"], "typing first, then the answer itself: nothing to update"


async def test_a_replica_without_teams_leaves_an_alert_post_queued_for_one_that_serves_it(
    settings: Settings, service: RagService, store: Store, acme_corpus: IngestReport
) -> None:
    """A rolling upgrade: the old replica (no Teams handlers) never claims the new kind."""
    await forget_unfinished_jobs(store)
    aad = new_aad_tenant()
    await add_teams_tenant(store, aad, "acme")
    await set_channel_switch(store, "acme", aad, ONCALL, "alerts", True)
    quick = teams_settings(settings, jwks_url="http://127.0.0.1:9/keys", local=True)
    quick = quick.model_copy(update={"job_poll_s": 0.05})
    async with FakeBotConnector() as connector:
        post = channel_post(
            service_url=connector.service_url,
            aad_tenant=aad,
            channel=ONCALL,
            sender=WORKFLOWS,
            attachments=(workflows_card(),),
        )
        thread, key = f"{ONCALL};messageid={post['id']}", f"test:{post['id']}"
        reference = Activity.model_validate(post).get_conversation_reference()
        request = ChannelPostRequest(
            reference=reference.model_copy(update={"activity_id": post["id"]}),
            aad_tenant=aad,
            channel_id=ONCALL,
            thread_root=post["id"],
            text=read_activity(Activity.model_validate(post)).question,
        )
        async with replica(store, quick, {KIND: Timed(0.0)}) as old:
            async with old.intake() as conn:
                job = JobRequest(
                    ALERT_POST, f"test:{post['id']}", request.payload(), job_tenant({})
                )
                assert await old.insert(conn, job)
            old.new_work.set()
            await asyncio.sleep(1.0)  # many claims by a worker that does not serve the kind
            assert await job_states(store, key) == [("queued", 0)]
        jobs = await JobQueue.open(store, quick)
        handlers, tasks = JobHandlers(), SettlingTasks(jobs)
        build_teams_app(
            settings=quick,
            mode=teams_mode(quick),
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
                [answer] = await connector.wait_for_messages(thread, 1)
                assert await tasks.drain(15) == 0
        finally:
            await jobs.close()
    assert await job_states(store, key) == [("done", 1)]
    assert "Posted automatically" in texts(answer)


async def job_states(store: Store, key: str) -> list[tuple[str, int]]:
    async with store.pool.connection() as conn:
        cur = await conn.execute("SELECT state, attempts FROM jobs WHERE dedupe_key = %s", (key,))
        return [(row[0], row[1]) for row in await cur.fetchall()]
