"""The runbook on the Slack card: a section picked from its menu replaces the shown section in
place (chat.update in a thread, response_url for /runbook), verbatim, and stays through later
redraws; a pick naming a runbook the answer does not name is refused."""

from __future__ import annotations

import json
import re
import uuid
from typing import Any

from bot.core.answers.store import AnswerStore
from bot.slack.blocks import Card
from rag import RunbookView
from tests.fakes.slack_api import SlackCall
from tests.test_blocks import assert_valid
from tests.test_slack_interactions import CHANNEL, PAYMENTS_502, Harness, bot, buttons

__all__ = ["bot"]  # the fixture, re-used from the interactions suite


def section_menu(call: SlackCall) -> dict[str, str]:
    """Section heading → the value its option carries."""
    return {
        option["text"]["text"]: option["value"]
        for block in call.body["blocks"]
        if block["type"] == "actions"
        for element in block["elements"]
        if element.get("action_id") == "pick_section"
        for option in element["options"]
    }


def shown_heading(call: SlackCall) -> str:
    [line] = [
        str(b["text"]["text"])
        for b in call.body["blocks"]
        if b["type"] == "section" and b["text"]["text"].startswith("*Runbook:*")
    ]
    return line


def panel_text(call: SlackCall) -> str:
    """The quoted section: the rich text block right below the runbook line."""
    blocks = call.body["blocks"]
    at = next(i for i, b in enumerate(blocks) if str(b.get("text", {})).count("*Runbook:*"))
    return "\n".join(
        part["text"]
        for element in blocks[at + 1]["elements"]
        for part in element["elements"]
        if part["type"] == "text"
    )


async def pick(
    bot: Harness,
    value: str,
    *,
    message_ts: str,
    ephemeral: bool = False,
    key: str = "pick",
) -> None:
    """A static_select pick, as Slack sends it: the option in ``selected_option``."""
    container = {"type": "message", "message_ts": message_ts, "channel_id": CHANNEL}
    action: dict[str, Any] = {
        "type": "static_select",
        "action_id": "pick_section",
        "block_id": "nav",
        "selected_option": {"text": {"type": "plain_text", "text": "x"}, "value": value},
    }
    payload = {
        "type": "block_actions",
        "team": {"id": "T_ACME"},
        "user": {"id": "U_BOB", "team_id": "T_ACME"},
        "api_app_id": "A_RUNBOOK",
        "container": {**container, "is_ephemeral": ephemeral},
        "channel": {"id": CHANNEL},
        "response_url": bot.slack.response_url(key),
        "trigger_id": f"trigger-4-{uuid.uuid4().hex[:12]}",
        "actions": [action],
    }
    assert (await bot.sender.interaction(payload)).status == 200


async def runbook_of_answer(bot: Harness, value: str) -> RunbookView:
    stored = await AnswerStore(bot.store).load("acme", json.loads(value)["a"])
    assert stored is not None and stored.result.runbook is not None
    return stored.result.runbook


def first_words(text: str) -> str:
    """The first words of a section as the card shows it: sub-headings without their marks."""
    return " ".join(re.sub(r"(?m)^#+ ", "", text).split()[:8])


async def test_picking_a_section_updates_the_thread_card_with_that_section_verbatim(
    bot: Harness,
) -> None:
    post = await bot.mention(PAYMENTS_502)
    assert "Payments gateway returning 5xx" in shown_heading(post)
    menu = section_menu(post)
    assert {"Impact", "Mitigation"} <= set(menu)
    view = await runbook_of_answer(bot, menu["Mitigation"])
    mitigation = next(s for s in view.sections if s.heading == "Mitigation")

    await pick(bot, menu["Mitigation"], message_ts=post.reply["ts"])
    [updated] = await bot.settle("chat.update")
    assert (updated.body["channel"], updated.body["ts"]) == (CHANNEL, post.reply["ts"])
    assert "*Mitigation*" in shown_heading(updated)
    assert first_words(mitigation.text) in " ".join(panel_text(updated).split())
    # The commands that fail over the PSP are quoted whole, in a code block, and labelled.
    code = [
        e["elements"][0]["text"]
        for b in updated.body["blocks"]
        if b["type"] == "rich_text"
        for e in b["elements"]
        if e["type"] == "rich_text_preformatted"
    ]
    assert any(c in mitigation.text for c in code)
    assert "Mitigation" not in section_menu(updated) and "Diagnosis" in section_menu(updated)
    assert "feedback" in buttons(updated), "the feedback buttons stay"
    assert_valid(Card(updated.body["text"], updated.body["blocks"]))


async def test_a_section_button_on_a_private_answer_replaces_it_via_the_response_url(
    bot: Harness,
) -> None:
    await bot.command(PAYMENTS_502)
    [private] = await bot.settle("response_url")
    value = section_menu(private)["Impact"]

    await pick(bot, value, message_ts="1.0", ephemeral=True, key="impact")
    shown = await bot.reply_for("impact")
    assert shown.body["replace_original"] is True
    assert "*Impact*" in shown_heading(shown) and "share_answer" in buttons(shown)
    assert bot.slack.calls_to("chat.update", ok=None) == []


async def test_a_quote_toggle_after_a_section_pick_keeps_that_section(bot: Harness) -> None:
    post = await bot.mention(PAYMENTS_502)
    await pick(bot, section_menu(post)["Impact"], message_ts=post.reply["ts"])
    await bot.settle("chat.update")
    toggle, answer_id = next((k, v) for k, v in buttons(post).items() if "show_quote" in k)

    await bot.click(toggle, answer_id, message_ts=post.reply["ts"])
    await bot.settle("chat.update", 2)
    redrawn = bot.slack.calls_to("chat.update")[-1]
    assert "*Impact*" in shown_heading(redrawn)


async def test_a_pick_naming_another_tenants_runbook_is_refused(bot: Harness) -> None:
    post = await bot.mention(PAYMENTS_502)
    value = json.loads(section_menu(post)["Impact"])
    # A globex runbook, and one both tenants have: neither is the runbook of acme's answer.
    for key, document in (
        ("ledger", "ledger/settlement-queue-backlog"),
        ("db", "database/primary-failover"),
    ):
        forged = json.dumps({**value, "d": document})
        await pick(bot, forged, message_ts=post.reply["ts"], key=key)
        assert "not part of this answer" in (await bot.reply_for(key)).body["text"]
    assert bot.slack.calls_to("chat.update", ok=None) == []
    async with bot.store.pool.connection() as conn:
        cur = await conn.execute(
            "SELECT shown_section FROM answers WHERE tenant_id = 'acme' AND answer_id = %s",
            (uuid.UUID(value["a"]),),
        )
        assert await cur.fetchone() == (None,)
