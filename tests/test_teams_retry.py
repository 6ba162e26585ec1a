"""Provider failures in Teams: the error card's Retry asks again and replaces the card in place."""

from __future__ import annotations

import asyncio
import json

from bot.teams.tenancy import add_teams_tenant
from rag import FastEmbedder, IngestReport, RagService, Settings, Store
from tests.adaptive_cards import card_of, card_problems, rendered_texts
from tests.fakes.anthropic_api import FakeAnthropic, error
from tests.fakes.bot_connector import FakeBotConnector
from tests.teams_harness import invoke, mention, new_aad_tenant, served_teams, teams_settings
from tests.test_slack_interactions import NOT_IN_SOURCES, claude_answerer

QUESTION = "payments are throwing 502s, what do I check first?"


async def test_retry_reruns_the_stored_question_and_replaces_the_error_card(
    settings: Settings, store: Store, embedder: FastEmbedder, acme_corpus: IngestReport
) -> None:
    aad = new_aad_tenant()
    await add_teams_tenant(store, aad, "acme")
    async with (
        FakeAnthropic(default=NOT_IN_SOURCES) as fake,
        claude_answerer(fake) as answerer,
        FakeBotConnector() as connector,
    ):
        fake.enqueue(error(529))
        service = RagService(store=store, embedder=embedder, answerer=answerer, settings=settings)
        local = teams_settings(settings, jwks_url="http://127.0.0.1:9/keys", local=True)
        async with served_teams(settings=local, service=service, store=store) as served:
            activity = mention(QUESTION, service_url=connector.service_url, aad_tenant=aad)
            await served.send(activity)
            [message] = await connector.wait_for_messages(activity["conversation"]["id"], 1)
            card = card_of(message.final)
            assert "Couldn't answer right now" in rendered_texts(card)
            [retry] = card["actions"]
            assert retry["verb"] == "retry" and card_problems(card) == []

            value = {"action": {"type": "Action.Execute", "verb": "retry", "data": retry["data"]}}
            click = invoke(
                "adaptiveCard/action",
                value,
                service_url=connector.service_url,
                aad_tenant=aad,
                conversation_id=message.conversation,
                reply_to=message.id,
            )
            status, body, _ = await served.send(click)
            assert status == 200
            assert "Searching runbooks" in json.dumps(json.loads(body)["value"])
            for _ in range(500):
                [replaced] = connector.live_messages(message.conversation)
                if "No runbook evidence" in json.dumps(replaced.final):
                    break
                await asyncio.sleep(0.02)
    assert replaced.id == message.id, "replaced in place, for everyone"
    assert card_of(replaced.final)["body"][0]["text"] == "No runbook evidence"
    assert fake.calls == 2
