"""The "Draft a runbook from this thread" shortcut, its modal and the delivery, in Slack: who
may open a pull request, what the modal shows, one PR for a double submit, and the Markdown in
the thread when the source's token may only read."""

from __future__ import annotations

import json
from pathlib import Path

from rag import FastEmbedder, Settings, Store
from tests.drafts_slack import ADMIN, MEMBER, DraftHarness, draft_bot, posts_in
from tests.drafts_threads import ALERT, COMMANDS, REPLIES, SECRET
from tests.fakes.forge import READ_ONLY_TOKEN


def kafka(bot: DraftHarness, channel: str = "C_INC") -> list[dict[str, object]]:
    root = {"user": "U_AM", "bot_id": "B_AM", "text": ALERT}
    return bot.thread([(user, text) for user, _, text in REPLIES], root=root, channel=channel)


def shown(view: dict[str, object]) -> str:
    return json.dumps(view)


async def test_an_admin_gets_a_modal_with_the_commands_in_order_and_no_secret(
    settings: Settings, store: Store, embedder: FastEmbedder, tmp_path: Path
) -> None:
    async with draft_bot(settings, store, embedder, tmp_path) as bot:
        thread = kafka(bot)
        view = await bot.shortcut(thread[-1])

    assert view["callback_id"] == "draft_runbook_submit"
    text = next(b for b in view["blocks"] if b.get("block_id") == "draft_text")["element"][
        "initial_value"
    ]
    positions = [text.index(command) for command in COMMANDS]
    assert positions == sorted(positions)
    assert SECRET not in shown(view)
    assert "*1* secret(s) redacted" in shown(view)
    title = next(b for b in view["blocks"] if b.get("block_id") == "draft_title")
    assert title["element"]["initial_value"] == "KafkaBrokerDiskUsageHigh"
    where = next(b for b in view["blocks"] if b.get("block_id") == "draft_destination")
    assert where["element"]["initial_option"]["value"] == "new"


async def test_a_member_who_owns_no_runbook_may_not_open_a_pull_request(
    settings: Settings, store: Store, embedder: FastEmbedder, tmp_path: Path
) -> None:
    async with draft_bot(settings, store, embedder, tmp_path) as bot:
        view = await bot.shortcut(kafka(bot)[-1], user=MEMBER)
    assert view["title"]["text"] == "Not allowed"
    assert "Only a workspace admin, a runbook-bot admin or a runbook owner" in shown(view)
    assert "submit" not in view


async def test_a_runbook_owner_may_open_one(
    settings: Settings, store: Store, embedder: FastEmbedder, tmp_path: Path
) -> None:
    async with draft_bot(settings, store, embedder, tmp_path) as bot:
        async with store.pool.connection() as conn:
            await conn.execute(
                "INSERT INTO owner_targets (tenant_id, name, target) "
                "VALUES ('acme', 'kafka-team', %s)",
                (MEMBER,),
            )
        try:
            view = await bot.shortcut(kafka(bot)[-1], user=MEMBER)
        finally:
            async with store.pool.connection() as conn:
                await conn.execute(
                    "DELETE FROM owner_targets WHERE tenant_id = 'acme' AND name = 'kafka-team'"
                )
    assert view["callback_id"] == "draft_runbook_submit"


async def test_a_person_an_admin_added_as_tenant_admin_may_open_one(
    settings: Settings, store: Store, embedder: FastEmbedder, tmp_path: Path
) -> None:
    async with draft_bot(settings, store, embedder, tmp_path) as bot:
        async with store.pool.connection() as conn:
            await conn.execute(
                "INSERT INTO tenant_admins (tenant_id, surface, principal, kind, added_by) "
                "VALUES ('acme', 'slack', %s, 'user', %s)",
                (MEMBER, ADMIN),
            )
        try:
            view = await bot.shortcut(kafka(bot)[-1], user=MEMBER)
        finally:
            async with store.pool.connection() as conn:
                await conn.execute(
                    "DELETE FROM tenant_admins WHERE tenant_id = 'acme' AND principal = %s",
                    (MEMBER,),
                )
    assert view["callback_id"] == "draft_runbook_submit"


async def test_anyone_may_when_the_tenant_allows_it(
    settings: Settings, store: Store, embedder: FastEmbedder, tmp_path: Path
) -> None:
    async with draft_bot(settings, store, embedder, tmp_path, draft_pr_anyone=True) as bot:
        view = await bot.shortcut(kafka(bot)[-1], user=MEMBER)
    assert view["callback_id"] == "draft_runbook_submit"


async def test_a_thread_in_a_private_channel_the_asker_is_not_in_is_refused(
    settings: Settings, store: Store, embedder: FastEmbedder, tmp_path: Path
) -> None:
    async with draft_bot(settings, store, embedder, tmp_path) as bot:
        bot.slack.channels["G_SECRET"] = {"is_private": True}
        bot.slack.members["G_SECRET"] = ["U_SOMEONE"]
        view = await bot.shortcut(kafka(bot, "G_SECRET")[-1], channel="G_SECRET")
        replies = bot.slack.calls_to("conversations.replies")
    assert "not a member of" in shown(view)
    assert replies == []  # the thread was never read


async def test_a_thread_without_commands_or_a_fix_says_so_instead_of_an_empty_draft(
    settings: Settings, store: Store, embedder: FastEmbedder, tmp_path: Path
) -> None:
    async with draft_bot(settings, store, embedder, tmp_path) as bot:
        thread = bot.thread(
            [(MEMBER, "anyone looking?"), (ADMIN, "on it")],
            root={"user": MEMBER, "text": "kafka is slow"},
        )
        view = await bot.shortcut(thread[-1])
    assert view["title"]["text"] == "Nothing to draft"
    assert "no commands and no message saying what fixed it" in shown(view)


async def test_a_double_submit_opens_one_pull_request_and_the_link_goes_to_thread_and_owner(
    settings: Settings, store: Store, embedder: FastEmbedder, tmp_path: Path
) -> None:
    async with draft_bot(settings, store, embedder, tmp_path) as bot:
        thread = kafka(bot)
        view = await bot.shortcut(thread[-1])
        assert await bot.submit(view, draft_owner=MEMBER) == ""
        assert await bot.submit(view, draft_owner=MEMBER) == ""
        await bot.settle()
        await bot.slack.wait_for("chat.postMessage", 2)
        again = await bot.shortcut(thread[3])
        pulls = list(bot.forge.pulls)
        told = posts_in(bot.slack, str(thread[0]["ts"]))
        dms = [c for c in bot.slack.calls_to("chat.postMessage") if c.body.get("channel") == MEMBER]
        files = {p.head: bot.forge.changed_files(p) for p in pulls}

    [pull] = pulls
    [content] = files[pull.head].values()
    assert list(files[pull.head]) == ["runbooks/KafkaBrokerDiskUsageHigh.md"]
    assert 'owner: "U_MEMBER"' in content and SECRET not in content
    assert "archives/C_INC" in pull.body and "Ada Admin" in pull.body
    assert len(told) == 1 and f"/pull/{pull.number}" in told[0].body["text"]
    assert len(dms) == 1 and f"/pull/{pull.number}" in dms[0].body["text"]
    assert again["title"]["text"] == "Already drafted" and f"/pull/{pull.number}" in shown(again)


async def test_a_members_forged_submission_of_an_admins_modal_opens_nothing(
    settings: Settings, store: Store, embedder: FastEmbedder, tmp_path: Path
) -> None:
    async with draft_bot(settings, store, embedder, tmp_path) as bot:
        view = await bot.shortcut(kafka(bot)[-1])
        reply = await bot.submit(view, user=MEMBER)
        await bot.settle()
        pulls = list(bot.forge.pulls)
    assert json.loads(reply)["response_action"] == "errors"
    assert pulls == []


async def test_a_read_only_token_gets_a_clear_message_and_the_markdown_in_the_thread(
    settings: Settings, store: Store, embedder: FastEmbedder, tmp_path: Path
) -> None:
    async with draft_bot(settings, store, embedder, tmp_path) as bot:
        async with store.pool.connection() as conn:
            await conn.execute(
                "UPDATE sources SET credential = %s "
                "WHERE tenant_id = 'acme' AND name LIKE 'forge-%%'",
                (json.dumps({"token": READ_ONLY_TOKEN}),),
            )
        thread = kafka(bot)
        await bot.submit(await bot.shortcut(thread[-1]))
        await bot.settle()
        uploads = await bot.slack.wait_for("files.completeUploadExternal")
        contents = list(bot.slack.uploads.values())
        pulls = list(bot.forge.pulls)

    assert pulls == []
    [upload] = uploads
    assert upload.body["thread_ts"] == thread[0]["ts"]
    assert "refused to write" in upload.body["initial_comment"]
    assert "can read the repository but not push to it" in upload.body["initial_comment"]
    [markdown] = contents
    assert COMMANDS[1].encode() in markdown and SECRET.encode() not in markdown
