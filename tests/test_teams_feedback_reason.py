"""👎 with a reason in Teams: the vote's card carries the reason form, and its submission stores
the reason with the cited runbooks and queues a note for their owners (as the Slack modal does).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import pytest_asyncio

from bot.teams.tenancy import add_teams_tenant
from rag import IngestReport, RagService, Settings, Store
from tests.adaptive_cards import activity_problems, card_of, card_problems, rendered_texts
from tests.fakes.bot_connector import FakeBotConnector
from tests.fakes.entra_keys import TokenIssuer
from tests.teams_harness import (
    APP_ID,
    USER,
    ServedTeams,
    feedback_value,
    invoke,
    mention,
    new_aad_tenant,
    served_teams,
    teams_settings,
)

ANSWERABLE = "how do I fail over the payments database?"


@dataclass
class Voter:
    served: ServedTeams
    connector: FakeBotConnector
    issuer: TokenIssuer
    aad_tenant: str
    store: Store

    async def invoke(self, value: dict[str, Any], where: dict[str, Any]) -> dict[str, Any]:
        token = self.issuer.token(audience=APP_ID, service_url=self.connector.service_url)
        status, body, _ = await self.served.send(
            invoke("adaptiveCard/action", value, **where), token=token
        )
        response: dict[str, Any] = json.loads(body)
        assert status == 200 and response["statusCode"] == 200
        card: dict[str, Any] = response["value"]
        assert card_problems(card) == []
        return card

    async def answered(self) -> tuple[str, dict[str, Any]]:
        """A fresh answer: its id and where a click on its card comes from."""
        activity = mention(
            ANSWERABLE, service_url=self.connector.service_url, aad_tenant=self.aad_tenant
        )
        token = self.issuer.token(audience=APP_ID, service_url=self.connector.service_url)
        await self.served.send(activity, token=token)
        [message] = await self.connector.wait_for_messages(activity["conversation"]["id"], 1)
        [up, _] = card_of(message.final)["actions"]
        where = {
            "service_url": self.connector.service_url,
            "aad_tenant": self.aad_tenant,
            "conversation_id": message.conversation,
            "reply_to": message.id,
        }
        return str(up["data"]["answer_id"]), where


@pytest_asyncio.fixture(loop_scope="session")
async def voter(
    settings: Settings, service: RagService, store: Store, acme_corpus: IngestReport
) -> AsyncIterator[Voter]:
    async with FakeBotConnector() as connector, TokenIssuer() as issuer:
        local = teams_settings(settings, jwks_url=issuer.jwks_url, local=True)
        async with served_teams(settings=local, service=service, store=store) as served:
            aad = new_aad_tenant()
            await add_teams_tenant(store, aad, "acme")
            yield Voter(served, connector, issuer, aad, store)
            async with store.pool.connection() as conn:
                # Flushes are global: notes left pending here would be sent by another test's.
                await conn.execute(
                    "DELETE FROM owner_notifications WHERE user_id = %s", (USER["aadObjectId"],)
                )
        problems = [
            f"{call.method} {call.kind}: {problem}"
            for call in connector.calls
            if call.body is not None
            for problem in activity_problems(call.body, call.size)
        ]
        assert problems == []


def reason_value(answer_id: str, reason: str | None, comment: str = "") -> dict[str, Any]:
    """What Teams sends for Send: the action's data with the form's inputs merged in."""
    data: dict[str, Any] = {"answer_id": answer_id, "comment": comment}
    if reason is not None:
        data["reason"] = reason
    action = {"type": "Action.Execute", "verb": "feedbackReason", "data": data}
    return {"action": action, "trigger": "manual"}


def form_parts(card: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The form's inputs and its Send action, by input id / verb (not the runbook's section
    buttons, which take no input)."""
    parts = {e["id"]: e for e in card["body"] if e["type"].startswith("Input.")}
    for element in card["body"]:
        if element["type"] == "ActionSet":
            parts |= {
                a["verb"]: a
                for a in element["actions"]
                if a["type"] == "Action.Execute" and a["verb"] != "showSection"
            }
    return parts


async def stored_votes(store: Store, answer_id: str) -> list[tuple[Any, ...]]:
    async with store.pool.connection() as conn:
        cur = await conn.execute(
            "SELECT user_id, value, reason, comment, documents FROM feedback WHERE answer_id = %s",
            (uuid.UUID(answer_id),),
        )
        return list(await cur.fetchall())


async def cited_documents(store: Store, answer_id: str) -> list[str]:
    async with store.pool.connection() as conn:
        cur = await conn.execute(
            "SELECT documents FROM answer_facts WHERE answer_id = %s", (uuid.UUID(answer_id),)
        )
        row = await cur.fetchone()
    assert row is not None
    return list(row[0])


async def owner_notes(store: Store, answer_id: str) -> list[tuple[Any, ...]]:
    async with store.pool.connection() as conn:
        cur = await conn.execute(
            "SELECT document_id, user_id, reason, comment, quote IS NOT NULL "
            "FROM owner_notifications WHERE answer_id = %s ORDER BY document_id",
            (uuid.UUID(answer_id),),
        )
        return list(await cur.fetchall())


async def test_a_downvote_answers_with_the_reason_form_of_the_slack_modal(voter: Voter) -> None:
    answer_id, where = await voter.answered()
    card = await voter.invoke(feedback_value(answer_id, "down"), where)

    parts = form_parts(card)
    assert parts["reason"]["style"] == "compact"
    assert [(c["value"], c["title"]) for c in parts["reason"]["choices"]] == [
        ("wrong_runbook", "Wrong runbook"),
        ("outdated", "Outdated"),
        ("missing_steps", "Missing steps"),
        ("unclear", "Unclear"),
        ("other", "Other"),
    ]
    assert parts["comment"]["isMultiline"] is True and parts["comment"]["maxLength"] == 1000
    send = parts["feedbackReason"]
    assert send["data"] == {"answer_id": answer_id}
    assert send["fallback"]["type"] == "Action.Submit"
    assert send["fallback"]["data"] == {"verb": "feedbackReason", "answer_id": answer_id}
    assert "not helpful" in " ".join(rendered_texts(card))


async def test_a_submitted_reason_is_stored_with_the_cited_runbooks_and_queued_for_the_owner(
    voter: Voter,
) -> None:
    answer_id, where = await voter.answered()
    await voter.invoke(feedback_value(answer_id, "down"), where)
    card = await voter.invoke(reason_value(answer_id, "missing_steps"), where)
    card = await voter.invoke(reason_value(answer_id, "outdated", "host retired"), where)

    assert form_parts(card) == {}, "the thanks card has no form"
    assert "your reason (Outdated)" in " ".join(rendered_texts(card))
    [(user, value, reason, comment, documents)] = await stored_votes(voter.store, answer_id)
    assert (user, value, reason, comment) == (
        USER["aadObjectId"],
        "down",
        "outdated",
        "host retired",
    )
    assert documents and documents == await cited_documents(voter.store, answer_id)
    notes = await owner_notes(voter.store, answer_id)
    assert [n[0] for n in notes] == sorted(documents), "one note per cited runbook"
    assert all(n[1:] == (USER["aadObjectId"], "outdated", "host retired", True) for n in notes)


async def test_a_missing_or_unknown_reason_shows_the_form_again_and_stores_nothing(
    voter: Voter,
) -> None:
    answer_id, where = await voter.answered()
    for value in (reason_value(answer_id, None), reason_value(answer_id, "because")):
        card = await voter.invoke(value, where)
        assert "Pick a reason, then send." in rendered_texts(card)
        assert "feedbackReason" in form_parts(card)
    assert await stored_votes(voter.store, answer_id) == []
    assert await owner_notes(voter.store, answer_id) == []


async def test_the_action_submit_fallback_stores_the_reason_too(voter: Voter) -> None:
    answer_id, where = await voter.answered()
    submit = mention("", service_url=voter.connector.service_url, aad_tenant=voter.aad_tenant)
    value = {"verb": "feedbackReason", "answer_id": answer_id, "reason": "unclear"}
    submit.update(text=None, entities=[], value=value, replyToId=where["reply_to"])
    token = voter.issuer.token(audience=APP_ID, service_url=voter.connector.service_url)
    status, _, _ = await voter.served.send(submit, token=token)
    assert status == 202
    [(_, value_, reason, _, _)] = await stored_votes(voter.store, answer_id)
    assert (value_, reason) == ("down", "unclear")
