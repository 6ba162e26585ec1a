"""The runbook on the Teams card: ``showSection`` is answered with the card redrawn around the
chosen section (valid Adaptive Card 1.5, within the activity limit), and a document id that is
not the answer's runbook is refused."""

from __future__ import annotations

import json
from typing import Any

from bot.teams.cards import card_bytes
from bot.teams.cards.elements import CARD_BUDGET_BYTES
from tests.adaptive_cards import card_problems, rendered_texts
from tests.teams_harness import invoke
from tests.test_teams_conversations import ANSWERABLE, Teams, final_card, teams

__all__ = ["teams"]  # the fixture, re-used from the conversations suite


def section_value(answer_id: str, document_id: str, section: int | str) -> dict[str, Any]:
    """What Teams sends for a section button: its data."""
    data = {"answer_id": answer_id, "document_id": document_id, "section": section}
    action = {"type": "Action.Execute", "verb": "showSection", "data": data}
    return {"action": action, "trigger": "manual"}


def section_buttons(card: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Section heading → the data of its button, wherever it sits (an ``Action.ShowCard``'s
    card included)."""
    found: dict[str, dict[str, Any]] = {}
    for element in card.get("body", []):
        for action in element.get("actions", []) if element["type"] == "ActionSet" else []:
            if action.get("verb") == "showSection":
                assert action["associatedInputs"] == "none", "the 👎 form never blocks it"
                found[action["title"]] = action["data"]
            if action["type"] == "Action.ShowCard":
                found |= section_buttons(action["card"])
    return found


async def test_show_section_answers_the_invoke_with_the_card_showing_that_section(
    teams: Teams,
) -> None:
    [message] = await teams.answer_to(teams.mention(ANSWERABLE))
    card = final_card(message)
    where: dict[str, Any] = {
        "service_url": teams.connector.service_url,
        "aad_tenant": teams.aad_tenant,
        "conversation_id": message.conversation,
        "reply_to": message.id,
    }
    heading, data = next(iter(section_buttons(card).items()))

    click = section_value(data["answer_id"], data["document_id"], data["section"])
    status, body, _ = await teams.send(invoke("adaptiveCard/action", click, **where))
    response = json.loads(body)
    assert status == 200 and response["statusCode"] == 200
    shown = response["value"]
    assert card_problems(shown) == [] and card_bytes(shown) <= CARD_BUDGET_BYTES
    assert heading not in section_buttons(shown), "the shown section is not offered again"
    runbook_line = next(
        "".join(r["text"] for r in e["inlines"])
        for e in shown["body"]
        if e["type"] == "RichTextBlock" and e["inlines"][0]["text"] == "Runbook: "
    )
    assert f" › {heading}" in runbook_line
    assert any(a["verb"] == "feedback" for a in shown["actions"]), "feedback stays"


async def test_show_section_with_another_runbooks_id_is_refused(teams: Teams) -> None:
    [message] = await teams.answer_to(teams.mention(ANSWERABLE))
    data = next(iter(section_buttons(final_card(message)).values()))
    where: dict[str, Any] = {
        "service_url": teams.connector.service_url,
        "aad_tenant": teams.aad_tenant,
        "conversation_id": message.conversation,
        "reply_to": message.id,
    }
    # Another tenant's runbook (globex), by a forged button: never looked up, never shown.
    click = section_value(data["answer_id"], "ledger/settlement-queue-backlog", 1)
    status, body, _ = await teams.send(invoke("adaptiveCard/action", click, **where))
    shown = json.loads(body)["value"]
    assert status == 200 and card_problems(shown) == []
    texts = "".join(rendered_texts(shown))
    assert "not part of this answer" in texts and "settlement" not in texts.lower()
