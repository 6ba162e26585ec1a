"""The real Teams app over HTTP against a fake Bot Connector, with signed test tokens: mentions,
threads, chats, dedupe, abstention, tenancy, the message action, feedback and connector retries.

Every activity the bot sends in every test is checked at teardown: a valid Adaptive Card 1.5,
within 28 KB, no mention entity, no literal ``<at>`` tag.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import pytest_asyncio

from bot.core.answers.store import AnswerStore
from bot.teams.tenancy import add_teams_tenant
from rag import IngestReport, RagService, Settings, Store
from tests.adaptive_cards import activity_problems, card_of, card_problems, rendered_texts
from tests.fakes.bot_connector import FakeBotConnector, Message
from tests.fakes.entra_keys import TokenIssuer
from tests.teams_harness import (
    ALERTS,
    APP_ID,
    USER,
    ServedTeams,
    alertmanager_payload,
    feedback_value,
    invoke,
    mention,
    new_aad_tenant,
    new_id,
    personal,
    served_teams,
    teams_settings,
)

ANSWERABLE = "how do I fail over the payments database?"
UNANSWERABLE = "what is the wifi password in the Berlin office?"
HOSTILE = "<at>Everyone</at> <script>alert(1)</script> @channel"


@dataclass
class Teams:
    served: ServedTeams
    connector: FakeBotConnector
    issuer: TokenIssuer
    aad_tenant: str
    store: Store
    service: RagService

    def token(self) -> str:
        return self.issuer.token(audience=APP_ID, service_url=self.connector.service_url)

    def mention(self, question: str, **kwargs: Any) -> dict[str, Any]:
        return mention(
            question, service_url=self.connector.service_url, aad_tenant=self.aad_tenant, **kwargs
        )

    async def send(self, activity: dict[str, Any]) -> tuple[int, str, float]:
        return await self.served.send(activity, token=self.token())

    async def answer_to(self, activity: dict[str, Any], count: int = 1) -> list[Message]:
        status, _, seconds = await self.send(activity)
        assert 200 <= status < 300 and seconds < 3
        return await self.connector.wait_for_messages(activity["conversation"]["id"], count)


@pytest_asyncio.fixture(loop_scope="session")
async def teams(
    settings: Settings, service: RagService, store: Store, acme_corpus: IngestReport
) -> AsyncIterator[Teams]:
    async with FakeBotConnector() as connector, TokenIssuer() as issuer:
        local = teams_settings(settings, jwks_url=issuer.jwks_url, local=True)
        async with served_teams(settings=local, service=service, store=store) as served:
            aad = new_aad_tenant()
            await add_teams_tenant(store, aad, "acme")
            yield Teams(served, connector, issuer, aad, store, service)
        problems = [
            f"{call.method} {call.kind}: {problem}"
            for call in connector.calls
            if call.body is not None
            for problem in activity_problems(call.body, call.size)
        ]
        assert problems == []


def final_card(message: Message) -> dict[str, Any]:
    return card_of(message.final)


def hidden_quotes(card: dict[str, Any]) -> dict[str, list[str]]:
    """Toggle target id → the verbatim quotes its hidden container holds (after its heading)."""
    containers = {
        e["id"]: e for e in card["body"] if e["type"] == "Container" and e.get("isVisible") is False
    }
    targets = [
        t
        for e in card["body"]
        if e["type"] == "ActionSet"
        for a in e["actions"]
        if a["type"] == "Action.ToggleVisibility"
        for t in a["targetElements"]
    ]
    return {
        t: ["".join(r["text"] for r in block["inlines"]) for block in containers[t]["items"][1:]]
        for t in targets
    }


async def test_mention_gets_one_answer_card_in_its_thread_with_verified_expandable_quotes(
    teams: Teams,
) -> None:
    activity = teams.mention(ANSWERABLE)
    thread = activity["conversation"]["id"]
    [message] = await teams.answer_to(activity)

    assert thread.endswith(f";messageid={activity['id']}")
    posts = [c for c in teams.connector.calls if c.kind in ("send", "reply")]
    assert [(c.kind, c.conversation, c.activity_id) for c in posts] == [
        ("reply", thread, activity["id"])
    ]
    assert message.updates, "the 'Searching runbooks…' card is updated in place"
    card = final_card(message)
    assert card_problems(card) == []
    quotes = hidden_quotes(card)
    assert quotes and all(quotes.values())
    async with teams.store.pool.connection() as conn:
        cur = await conn.execute(
            "SELECT tenant_id, answer_id FROM answers "
            "WHERE conversation_id = %s AND message_ts = %s",
            (thread, message.id),
        )
        [(tenant, answer_id)] = await cur.fetchall()
    # Stored by reference: loading re-reads the cited chunks under the tenant's reader.
    stored = await AnswerStore(teams.store).load(tenant, str(answer_id))
    assert stored is not None
    citations = stored.result.citations
    # Each shown quote is a cited quote, or its visibly clipped start (a paragraph can be
    # longer than the card's per-source share).
    cited = {c.quote for c in citations}
    for shown_quote in (q for shown in quotes.values() for q in shown):
        assert shown_quote in cited or (
            shown_quote.endswith("…") and any(q.startswith(shown_quote[:-1]) for q in cited)
        ), shown_quote
    for citation in citations:  # verbatim, up to the whitespace the verifier forgives
        assert " ".join(citation.quote.split()) in " ".join(citation.evidence.content.split())
    assert all(c.authorization is None for c in teams.connector.calls), "local mode: unsigned"


async def test_mention_inside_a_thread_answers_in_that_thread(teams: Teams) -> None:
    root = new_id()
    activity = teams.mention(ANSWERABLE, root=root)
    [message] = await teams.answer_to(activity)
    assert message.conversation.endswith(f";messageid={root}")
    assert "Action.ToggleVisibility" in json.dumps(final_card(message))


async def test_triple_delivery_gets_one_answer_and_a_new_activity_its_own(teams: Teams) -> None:
    activity = teams.mention(ANSWERABLE)
    thread = activity["conversation"]["id"]
    first = await asyncio.gather(teams.send(activity), teams.send(activity))
    await asyncio.sleep(1.0)
    third = await teams.send(activity)
    assert all(200 <= status < 300 for status, _, _ in [*first, third])
    assert len(await teams.connector.wait_for_messages(thread, 1, settle=1.0)) == 1

    follow_up = teams.mention(ANSWERABLE + " and the replica?", root=activity["id"])
    await teams.send(follow_up)
    assert len(await teams.connector.wait_for_messages(thread, 2)) == 2


async def test_unanswerable_question_gets_the_no_runbook_evidence_card(teams: Teams) -> None:
    [message] = await teams.answer_to(teams.mention(UNANSWERABLE))
    card = final_card(message)
    assert card["body"][0]["text"] == "No runbook evidence"
    assert "Action.ToggleVisibility" not in json.dumps(card)


async def test_unmapped_tenant_gets_not_connected_and_nothing_is_searched(teams: Teams) -> None:
    searches = teams.service.metrics.registry.get_sample_value("runbook_retrieval_seconds_count")
    stranger = new_aad_tenant()
    activity = mention(ANSWERABLE, service_url=teams.connector.service_url, aad_tenant=stranger)
    [message] = await teams.answer_to(activity)

    shown = " ".join(rendered_texts(message.final)).lower()
    assert "not connected" in shown and stranger in shown
    assert not message.updates, "no 'Searching…' card: nothing was searched"
    after = teams.service.metrics.registry.get_sample_value("runbook_retrieval_seconds_count")
    assert after == searches
    async with teams.store.pool.connection() as conn:
        cur = await conn.execute(
            "SELECT count(*) FROM answers WHERE conversation_id = %s",
            (activity["conversation"]["id"],),
        )
        assert await cur.fetchone() == (0,)


async def test_bare_mention_gets_the_help_card_pointing_to_ask_runbooks(teams: Teams) -> None:
    [message] = await teams.answer_to(teams.mention(""))
    shown = " ".join(rendered_texts(message.final))
    assert "Ask runbooks" in shown
    assert "Action." not in json.dumps(final_card(message))


async def test_personal_chat_with_a_long_conversation_id_gets_an_answer(teams: Teams) -> None:
    chat = "a:1" + "x" * 140
    activity = personal(
        ANSWERABLE, service_url=teams.connector.service_url, aad_tenant=teams.aad_tenant, chat=chat
    )
    [message] = await teams.answer_to(activity)
    assert hidden_quotes(final_card(message))


async def test_message_action_prefills_the_dialog_then_answers_in_the_alert_thread(
    teams: Teams,
) -> None:
    alert_id = new_id()
    value = {
        "commandId": "askRunbooks",
        "commandContext": "message",
        "messagePayload": alertmanager_payload(alert_id),
    }
    where: dict[str, Any] = {
        "service_url": teams.connector.service_url,
        "aad_tenant": teams.aad_tenant,
    }
    fetch = invoke("composeExtension/fetchTask", value, conversation_id=ALERTS, **where)
    status, body, _ = await teams.send(fetch)
    assert status == 200
    task = json.loads(body)["task"]
    dialog = task["value"]["card"]["content"]
    assert task["type"] == "continue" and card_problems(dialog) == []
    [question_input] = [e for e in dialog["body"] if e["type"] == "Input.Text"]
    assert "KubePodCrashLooping" in question_input["value"]

    data = {question_input["id"]: question_input["value"], "action": "askRunbooks"}
    submit = invoke(
        "composeExtension/submitAction", {**value, "data": data}, conversation_id=ALERTS, **where
    )
    status, body, seconds = await teams.send(submit)
    assert (status, body) == (200, "") and seconds < 5
    [message] = await teams.connector.wait_for_messages(f"{ALERTS};messageid={alert_id}", 1)
    assert card_problems(final_card(message)) == []
    assert "Searching runbooks" not in json.dumps(message.final)


async def test_a_repeated_ask_on_the_same_post_is_answered_again_and_a_redelivery_is_not(
    teams: Teams,
) -> None:
    alert_id = new_id()
    thread = f"{ALERTS};messageid={alert_id}"
    value = {"commandId": "askRunbooks", "messagePayload": alertmanager_payload(alert_id)}
    where: dict[str, Any] = {
        "service_url": teams.connector.service_url,
        "aad_tenant": teams.aad_tenant,
    }
    first = invoke("composeExtension/submitAction", value, conversation_id=ALERTS, **where)
    assert (await teams.send(first))[:2] == (200, "")
    await teams.connector.wait_for_messages(thread, 1)

    # The same invoke delivered again: one answer, and the asker is told it is on its way.
    status, body, _ = await teams.send(first)
    assert status == 200 and "already answering" in json.loads(body)["task"]["value"].lower()

    # A new ask on the same post (say, after the runbook was fixed) is a new answer.
    again = invoke("composeExtension/submitAction", value, conversation_id=ALERTS, **where)
    assert (await teams.send(again))[:2] == (200, "")
    await teams.connector.wait_for_messages(thread, 2)
    assert await teams.served.tasks.drain(10) == 0
    assert len(teams.connector.live_messages(thread)) == 2


async def test_feedback_is_stored_once_per_user_and_acknowledged_for_the_clicker(
    teams: Teams,
) -> None:
    [message] = await teams.answer_to(teams.mention(ANSWERABLE))
    [execute, _] = [a for a in final_card(message)["actions"] if a["verb"] == "feedback"]
    answer_id = execute["data"]["answer_id"]
    assert execute["fallback"]["type"] == "Action.Submit"
    where: dict[str, Any] = {
        "service_url": teams.connector.service_url,
        "aad_tenant": teams.aad_tenant,
        "conversation_id": message.conversation,
        "reply_to": message.id,
    }
    other = {**USER, "id": "29:other", "aadObjectId": "0d0d0d0d-1111-4222-8333-444444444444"}
    clicks = [
        invoke("adaptiveCard/action", feedback_value(answer_id, "up"), **where),
        invoke("adaptiveCard/action", feedback_value(answer_id, "up"), **where),
        invoke("adaptiveCard/action", feedback_value(answer_id, "down"), **where, user=other),
    ]
    for click in clicks:
        status, body, _ = await teams.send(click)
        response = json.loads(body)
        assert status == 200 and response["statusCode"] == 200
        assert response["type"] == "application/vnd.microsoft.card.adaptive"
        assert card_problems(response["value"]) == []
        assert "Thanks" in json.dumps(response["value"])
        assert "actions" not in response["value"], "the buttons give way to the acknowledgement"
    async with teams.store.pool.connection() as conn:
        cur = await conn.execute(
            "SELECT user_id, value FROM feedback WHERE answer_id = %s ORDER BY user_id",
            (answer_id,),
        )
        assert await cur.fetchall() == [(other["aadObjectId"], "down"), (USER["aadObjectId"], "up")]


async def test_connector_429_and_502_are_retried_into_exactly_one_answer(teams: Teams) -> None:
    teams.connector.fail("post", 429, retry_after=1)
    teams.connector.fail("update", 502)
    activity = teams.mention(ANSWERABLE)
    [message] = await teams.answer_to(activity)

    calls = [c for c in teams.connector.calls if c.conversation == activity["conversation"]["id"]]
    assert [(c.kind, c.status) for c in calls] == [
        ("typing", 201),
        ("reply", 429),
        ("reply", 201),
        ("update", 502),
        ("update", 200),
    ]
    assert calls[2].at - calls[1].at >= 1.0, "Retry-After: 1 is honoured"
    assert hidden_quotes(final_card(message))


async def test_a_post_whose_outcome_is_unknown_is_never_sent_again(teams: Teams) -> None:
    teams.connector.fail("post", 0)  # the connection drops after the request arrived
    activity = teams.mention(ANSWERABLE)
    await teams.answer_to(activity)

    posts = [
        c
        for c in teams.connector.calls
        if c.conversation == activity["conversation"]["id"] and c.kind == "reply"
    ]
    assert len(posts) == 2
    bodies = [json.dumps(c.body) for c in posts]
    assert "Searching runbooks" in bodies[0] and "Searching runbooks" not in bodies[1]


async def test_hostile_text_is_neutralised_and_nothing_mentions_anyone(teams: Teams) -> None:
    everyone = {"type": "mention", "text": "<at>Everyone</at>", "mentioned": {"id": "19:x"}}
    activity = teams.mention(f"{HOSTILE} {ANSWERABLE}", extra_entities=(everyone,))
    await teams.answer_to(activity)
    alert_id = new_id()
    value = {
        "commandId": "askRunbooks",
        "messagePayload": alertmanager_payload(alert_id, hostile=HOSTILE),
    }
    where: dict[str, Any] = {
        "service_url": teams.connector.service_url,
        "aad_tenant": teams.aad_tenant,
    }
    status, body, _ = await teams.send(
        invoke("composeExtension/fetchTask", value, conversation_id=ALERTS, **where)
    )
    dialog = json.loads(body)["task"]["value"]["card"]["content"]
    assert (
        status == 200
        and activity_problems(
            {
                "attachments": [
                    {"contentType": "application/vnd.microsoft.card.adaptive", "content": dialog}
                ]
            },
            len(body),
        )
        == []
    )
    await teams.send(
        invoke("composeExtension/submitAction", value, conversation_id=ALERTS, **where)
    )
    await teams.connector.wait_for_messages(f"{ALERTS};messageid={alert_id}", 1)
    # The teardown checks every recorded activity for mention entities and <at> tags.


async def test_the_action_submit_fallback_stores_the_vote_too(teams: Teams) -> None:
    [message] = await teams.answer_to(teams.mention(ANSWERABLE))
    [up, _] = final_card(message)["actions"]
    submit = teams.mention("")
    submit.update(text=None, entities=[], value=up["fallback"]["data"], replyToId=message.id)
    status, _, _ = await teams.send(submit)
    assert status == 202
    async with teams.store.pool.connection() as conn:
        cur = await conn.execute(
            "SELECT user_id, value FROM feedback WHERE answer_id = %s",
            (up["data"]["answer_id"],),
        )
        assert await cur.fetchall() == [(USER["aadObjectId"], "up")]


async def test_a_failing_turn_shows_a_fixed_card_never_the_exception(teams: Teams) -> None:
    click = invoke(
        "adaptiveCard/action",
        feedback_value("5b9c0f52-0000-4000-8000-000000000000", "up"),
        service_url=teams.connector.service_url,
        aad_tenant=teams.aad_tenant,
        conversation_id=f"{teams.mention('')['conversation']['id']}",
    )
    del click["from"]  # no sender: the handler cannot name the voter and fails
    status, body, _ = await teams.send(click)
    response = json.loads(body)
    assert status == 200 and response["statusCode"] == 200
    shown = " ".join(rendered_texts(response["value"]))
    assert "Something went wrong on runbook-bot's side" in shown
    assert "Error" not in shown and "NoneType" not in body
