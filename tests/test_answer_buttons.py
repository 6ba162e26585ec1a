"""Share and Show/Hide quote under failure and concurrency: a failed share can be retried, and
clicks that race each other all land."""

from __future__ import annotations

import asyncio
import uuid

from tests.fakes.slack_api import api_error
from tests.test_slack_interactions import PAYMENTS_502, Harness, bot, buttons

__all__ = ["bot"]  # the fixture, re-used from the interactions suite


async def expanded(bot: Harness, answer_id: str) -> set[int]:
    async with bot.store.pool.connection() as conn:
        cur = await conn.execute(
            "SELECT expanded FROM answers WHERE tenant_id = 'acme' AND answer_id = %s",
            (uuid.UUID(answer_id),),
        )
        row = await cur.fetchone()
    assert row is not None
    return set(row[0])


async def test_a_share_whose_post_failed_can_be_shared_again(bot: Harness) -> None:
    await bot.command(PAYMENTS_502)
    [private] = await bot.settle("response_url")
    answer_id = buttons(private)["share_answer"]

    bot.slack.fail("chat.postMessage", api_error("msg_blocks_too_long"))
    await bot.click("share_answer", answer_id, message_ts="1.0", ephemeral=True, key="first")
    first = await bot.reply_for("first")
    assert "already been shared" not in first.body["text"]
    assert bot.slack.calls_to("chat.postMessage") == []

    await bot.click("share_answer", answer_id, message_ts="1.0", ephemeral=True, key="again")
    [shared] = await bot.settle("chat.postMessage")
    assert "share_answer" not in buttons(shared)


async def test_concurrent_show_quote_clicks_both_stay_expanded(bot: Harness) -> None:
    post = await bot.mention(PAYMENTS_502)
    toggles = sorted(k for k in buttons(post) if k.startswith("show_quote:"))
    assert len(toggles) >= 2, "the demo answer cites at least two runbook passages"
    answer_id = buttons(post)[toggles[0]]
    first, second = (int(t.split(":")[1]) for t in toggles[:2])
    ts = post.reply["ts"]

    for _ in range(5):  # a lost update needs the two clicks to interleave; give it chances
        await asyncio.gather(
            bot.click(toggles[0], answer_id, message_ts=ts, key="a"),
            bot.click(toggles[1], answer_id, message_ts=ts, key="b"),
        )
        assert await bot.tasks.drain(10) == 0
        assert await expanded(bot, answer_id) == {first, second}
        await asyncio.gather(
            bot.click(f"hide_quote:{first}", answer_id, message_ts=ts, key="c"),
            bot.click(f"hide_quote:{second}", answer_id, message_ts=ts, key="d"),
        )
        assert await bot.tasks.drain(10) == 0
        assert await expanded(bot, answer_id) == set()
