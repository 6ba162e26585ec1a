""" "Write the runbook" on Slack cards (issue 40): offered on an abstention asked in a thread
people have worked in, and on a 👎'd answer there; never on a thread with too few replies; the
click opens the same review modal as the shortcut, with the same permission checks."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from bot.core.gaps.report import gap_report
from bot.slack.blocks.digest import render_digest
from rag import FastEmbedder, IngestReport, Settings, Store
from tests.drafts_slack import ADMIN, CHANNEL, MEMBER, DraftHarness, draft_bot, posts_in
from tests.drafts_threads import ALERT, REPLIES
from tests.fakes.slack_api import SlackCall

UNANSWERABLE = "is the quantum flux capacitor on the moon base recalibrated yet?"
PAYMENTS_502 = "payments are throwing 502s, what do I check first?"


def kafka(bot: DraftHarness, replies: int = len(REPLIES)) -> list[dict[str, Any]]:
    root = {"user": "U_AM", "bot_id": "B_AM", "text": ALERT}
    return bot.thread([(user, text) for user, _, text in REPLIES[:replies]], root=root)


def offer(call: SlackCall) -> str | None:
    """The answer id the card's "Write the runbook" button carries, if it has one."""
    for block in call.body.get("blocks") or []:
        for element in block.get("elements") or []:
            if isinstance(element, dict) and element.get("action_id") == "write_runbook":
                return str(element.get("value"))
    return None


async def card_in(bot: DraftHarness, thread_ts: str) -> SlackCall:
    await bot.slack.wait_for(
        "chat.postMessage", where=lambda c: c.body.get("thread_ts") == thread_ts
    )
    await bot.settle()
    [card] = posts_in(bot.slack, thread_ts)
    return card


async def click(
    bot: DraftHarness, action_id: str, value: str, *, message_ts: str, user: str = ADMIN
) -> None:
    payload = {
        "type": "block_actions",
        "team": {"id": "T_ACME", "domain": "acme"},
        "user": {"id": user, "team_id": "T_ACME"},
        "api_app_id": "A_RUNBOOK",
        "container": {"type": "message", "message_ts": message_ts, "channel_id": CHANNEL},
        "channel": {"id": CHANNEL},
        "response_url": bot.slack.response_url(f"click-{uuid.uuid4().hex[:6]}"),
        "trigger_id": f"trigger-offer-{uuid.uuid4().hex[:12]}",
        "actions": [{"action_id": action_id, "block_id": "b1", "value": value}],
    }
    assert (await bot.sender.interaction(payload)).status == 200


async def opened_view(bot: DraftHarness, before: int) -> dict[str, Any]:
    calls = await bot.slack.wait_for("views.open", before + 1)
    await bot.settle()
    view = calls[-1].body["view"]
    assert isinstance(view, dict)
    return view


async def test_an_abstention_in_a_worked_thread_offers_the_draft_and_the_click_opens_the_modal(
    settings: Settings, store: Store, embedder: FastEmbedder, tmp_path: Path
) -> None:
    async with draft_bot(settings, store, embedder, tmp_path) as bot:
        thread_ts = kafka(bot)[0]["ts"]
        await bot.mention(thread_ts, UNANSWERABLE)
        card = await card_in(bot, thread_ts)
        answer_id = offer(card)
        assert card.body["text"].startswith("No runbook evidence") and answer_id
        before = len(bot.slack.calls_to("views.open"))
        await click(bot, "write_runbook", answer_id, message_ts=card.reply["ts"])
        view = await opened_view(bot, before)

    assert view["callback_id"] == "draft_runbook_submit"
    title = next(b for b in view["blocks"] if b.get("block_id") == "draft_title")
    assert title["element"]["initial_value"] == "KafkaBrokerDiskUsageHigh"


async def test_a_thread_with_two_human_replies_gets_no_offer(
    settings: Settings, store: Store, embedder: FastEmbedder, tmp_path: Path
) -> None:
    async with draft_bot(settings, store, embedder, tmp_path) as bot:
        thread_ts = kafka(bot, replies=1)[0]["ts"]  # one reply, and the mention: two
        await bot.mention(thread_ts, UNANSWERABLE)
        card = await card_in(bot, thread_ts)
    assert card.body["text"].startswith("No runbook evidence")
    assert offer(card) is None


async def test_a_member_who_clicks_write_the_runbook_is_refused_like_the_shortcut(
    settings: Settings, store: Store, embedder: FastEmbedder, tmp_path: Path
) -> None:
    async with draft_bot(settings, store, embedder, tmp_path) as bot:
        thread_ts = kafka(bot)[0]["ts"]
        await bot.mention(thread_ts, UNANSWERABLE)
        card = await card_in(bot, thread_ts)
        answer_id = offer(card)
        assert answer_id
        before = len(bot.slack.calls_to("views.open"))
        await click(bot, "write_runbook", answer_id, message_ts=card.reply["ts"], user=MEMBER)
        view = await opened_view(bot, before)
    assert view["title"]["text"] == "Not allowed" and "submit" not in view


async def test_a_downvoted_answer_in_a_worked_thread_is_redrawn_with_the_offer_and_keeps_it(
    settings: Settings,
    store: Store,
    embedder: FastEmbedder,
    tmp_path: Path,
    demo_corpus: IngestReport,
) -> None:
    async with draft_bot(settings, store, embedder, tmp_path) as bot:
        thread_ts = kafka(bot)[0]["ts"]
        await bot.mention(thread_ts, PAYMENTS_502)
        card = await card_in(bot, thread_ts)
        assert not card.body["text"].startswith("No runbook evidence") and offer(card) is None
        answer_id = next(
            str(e["value"]).removesuffix(":up")
            for b in card.body["blocks"]
            for e in b.get("elements") or []
            if isinstance(e, dict) and e.get("action_id") == "feedback"
            for e in [e["positive_button"]]
        )
        await click(bot, "feedback", f"{answer_id}:down", message_ts=card.reply["ts"])
        on_card = lambda c: c.body.get("ts") == card.reply["ts"]  # noqa: E731
        [redrawn] = await bot.slack.wait_for("chat.update", 1, where=on_card)
        await bot.settle()
        assert redrawn.body["ts"] == card.reply["ts"] and offer(redrawn) == answer_id
        # A later redraw of the same card (a quote shown) keeps the button.
        toggle = next(
            str(e["action_id"])
            for b in redrawn.body["blocks"]
            for e in b.get("elements") or []
            if isinstance(e, dict) and str(e.get("action_id", "")).startswith("show_quote")
        )
        await click_on(bot, toggle, answer_id, redrawn)
        updates = await bot.slack.wait_for("chat.update", 2, where=on_card)
        await bot.settle()
    assert offer(updates[-1]) == answer_id


async def click_on(bot: DraftHarness, action_id: str, value: str, shown: SlackCall) -> None:
    """A click on a card as Slack sends it: with the message it was made on."""
    payload = {
        "type": "block_actions",
        "team": {"id": "T_ACME", "domain": "acme"},
        "user": {"id": ADMIN, "team_id": "T_ACME"},
        "api_app_id": "A_RUNBOOK",
        "container": {"type": "message", "message_ts": shown.body["ts"], "channel_id": CHANNEL},
        "channel": {"id": CHANNEL},
        "message": {"ts": shown.body["ts"], "blocks": shown.body["blocks"]},
        "response_url": bot.slack.response_url("toggle"),
        "trigger_id": f"trigger-offer-{uuid.uuid4().hex[:12]}",
        "actions": [{"action_id": action_id, "block_id": "b1", "value": value}],
    }
    assert (await bot.sender.interaction(payload)).status == 200


async def test_the_digest_offers_the_draft_of_a_gap_asked_in_a_thread_and_it_opens_the_modal(
    settings: Settings, store: Store, embedder: FastEmbedder, tmp_path: Path
) -> None:
    async with draft_bot(settings, store, embedder, tmp_path) as bot:
        thread_ts = kafka(bot)[0]["ts"]
        await bot.mention(thread_ts, UNANSWERABLE)
        answer_id = offer(await card_in(bot, thread_ts))
        assert answer_id is not None
        report = await gap_report(
            store, "acme", since=timedelta(hours=1), stale_after_days=90, now=datetime.now(UTC)
        )
        digest = render_digest(report, days=7)
        offered = [
            e
            for b in digest.blocks
            for e in b.get("elements") or []
            if isinstance(e, dict) and e.get("action_id") == "write_runbook"
        ]
        before = len(bot.slack.calls_to("views.open"))
        assert answer_id in [e["value"] for e in offered]  # other tests' gaps may be listed too
        await click(bot, "write_runbook", answer_id, message_ts=thread_ts)
        view = await opened_view(bot, before)
    assert len([g for g in report.gaps if g.thread_answer == answer_id]) == 1
    assert all(e["text"]["text"].startswith("Write the runbook: ") for e in offered)
    as_json = report.as_json()["gaps"]
    assert isinstance(as_json, list) and as_json
    assert all("thread_answer" not in g for g in as_json)  # the JSON stays as it was
    assert view["callback_id"] == "draft_runbook_submit"
