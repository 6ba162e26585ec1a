"""👎 with a reason, end to end on a fake Slack: modal, stored reason, one batched owner message."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

from bot.core.owners.queue import flush_owner_notes
from bot.core.owners.runbook_owners import map_owner, set_default_owner
from bot.core.upkeep import upkeep_running
from bot.slack.owner_messages import SlackOwnerMessenger
from rag import FastEmbedder, Settings, Store
from tests.owner_harness import OwnerHarness, owner_harness, write_owned_corpus

DBA = "U0DBA"
FAILOVER = "database/primary-failover.md"


async def cited_documents(harness: OwnerHarness, answer_id: str) -> list[str]:
    async with harness.store.pool.connection() as conn:
        cur = await conn.execute(
            "SELECT documents FROM answer_facts WHERE tenant_id = %s AND answer_id = %s",
            (harness.tenant, uuid.UUID(answer_id)),
        )
        row = await cur.fetchone()
    assert row is not None
    return list(row[0])


async def outcomes(harness: OwnerHarness) -> list[tuple[str, str | None, str | None]]:
    async with harness.store.pool.connection() as conn:
        cur = await conn.execute(
            "SELECT document_id, outcome, target FROM owner_notifications "
            "WHERE tenant_id = %s ORDER BY document_id, user_id",
            (harness.tenant,),
        )
        return list(await cur.fetchall())


async def test_a_downvote_opens_a_modal_and_its_reason_reaches_the_owner_once(
    settings: Settings, store: Store, embedder: FastEmbedder, tmp_path: Path
) -> None:
    corpus = write_owned_corpus(tmp_path, {FAILOVER: DBA})
    async with owner_harness(settings, store, embedder, corpus) as bot:
        post, answer_id = await bot.ask()
        assert await cited_documents(bot, answer_id) == ["database/primary-failover"]

        view = await bot.vote_down(post, answer_id, "U_BOB")
        assert view["type"] == "modal" and view["private_metadata"] == answer_id
        reasons = view["blocks"][1]["element"]["options"]
        assert [o["value"] for o in reasons] == [
            "wrong_runbook",
            "outdated",
            "missing_steps",
            "unclear",
            "other",
        ]
        await bot.submit_reason(view, "U_BOB", "outdated", "step 3 names a host we retired")
        async with bot.store.pool.connection() as conn:
            cur = await conn.execute(
                "SELECT user_id, value, reason, comment, documents FROM feedback "
                "WHERE tenant_id = %s AND answer_id = %s",
                (bot.tenant, uuid.UUID(answer_id)),
            )
            assert await cur.fetchall() == [
                (
                    "U_BOB",
                    "down",
                    "outdated",
                    "step 3 names a host we retired",
                    ["database/primary-failover"],
                )
            ]

        report = await bot.flush()
        assert (report.sent, report.unrouted, report.failed) == (1, 0, [])
        [message] = bot.owner_messages(DBA)
        text = str(message.body["blocks"])
        assert "Outdated" in text and "step 3 names a host we retired" in text
        assert "Patroni did not fail over by itself" in text  # the question, still retained
        assert "rich_text_quote" in text  # the cited quote, literal
        permalink = f"https://fake.slack/archives/C_INCIDENT/p{post.reply['ts'].replace('.', '')}"
        assert permalink in text
        assert "https://wiki.acme.example/runbooks/database/primary-failover" in text
        assert message.body["unfurl_links"] is False
        assert (await bot.flush()).sent == 0  # nothing is sent twice


async def test_a_changed_reason_replaces_the_pending_one(
    settings: Settings, store: Store, embedder: FastEmbedder, tmp_path: Path
) -> None:
    corpus = write_owned_corpus(tmp_path, {FAILOVER: DBA})
    async with owner_harness(settings, store, embedder, corpus) as bot:
        post, answer_id = await bot.ask()
        view = await bot.vote_down(post, answer_id, "U_BOB")
        await bot.submit_reason(view, "U_BOB", "unclear")
        view = await bot.vote_down(post, answer_id, "U_BOB")
        await bot.submit_reason(view, "U_BOB", "missing_steps")

        await bot.flush()
        [message] = bot.owner_messages(DBA)
        text = str(message.body["blocks"])
        assert "Missing steps" in text and "Unclear" not in text
        async with bot.store.pool.connection() as conn:
            cur = await conn.execute(
                "SELECT count(*), min(reason) FROM feedback WHERE tenant_id = %s", (bot.tenant,)
            )
            assert await cur.fetchone() == (1, "missing_steps")


async def test_a_downvote_changed_to_an_upvote_before_the_batch_goes_out_is_not_sent(
    settings: Settings, store: Store, embedder: FastEmbedder, tmp_path: Path
) -> None:
    corpus = write_owned_corpus(tmp_path, {FAILOVER: DBA})
    async with owner_harness(settings, store, embedder, corpus) as bot:
        post, answer_id = await bot.ask()
        await bot.submit_reason(await bot.vote_down(post, answer_id, "U_BOB"), "U_BOB", "unclear")
        await bot.vote_up(post, answer_id, "U_BOB")
        report = await bot.flush()
        assert (report.sent, report.withdrawn) == (0, 1) and not bot.owner_messages(DBA)
        assert await outcomes(bot) == [("database/primary-failover", "withdrawn", None)]


async def test_batching_sends_at_most_one_message_per_runbook_per_window(
    settings: Settings, store: Store, embedder: FastEmbedder, tmp_path: Path
) -> None:
    corpus = write_owned_corpus(tmp_path, {FAILOVER: DBA})
    async with owner_harness(settings, store, embedder, corpus) as bot:
        post, answer_id = await bot.ask()
        for user, reason in (("U_BOB", "outdated"), ("U_CAROL", "unclear")):
            await bot.submit_reason(await bot.vote_down(post, answer_id, user), user, reason)
        await bot.flush()
        [first] = bot.owner_messages(DBA)
        assert "Outdated" in str(first.body["blocks"]) and "Unclear" in str(first.body["blocks"])

        await bot.submit_reason(await bot.vote_down(post, answer_id, "U_DAN"), "U_DAN", "other")
        assert (await bot.flush()).sent == 0  # inside the hour: held back
        assert len(bot.owner_messages(DBA)) == 1

        async with bot.store.pool.connection() as conn:  # the hour has passed
            await conn.execute(
                "UPDATE owner_batches SET last_sent_at = now() - interval '61 minutes' "
                "WHERE tenant_id = %s",
                (bot.tenant,),
            )
        assert (await bot.flush()).sent == 1
        first_again, second = bot.owner_messages(DBA)
        assert "Other" in str(second.body["blocks"]) and "Unclear" not in str(second.body)


async def test_two_replicas_flushing_at_once_send_the_batch_once(
    settings: Settings, store: Store, embedder: FastEmbedder, tmp_path: Path
) -> None:
    corpus = write_owned_corpus(tmp_path, {FAILOVER: DBA})
    async with owner_harness(settings, store, embedder, corpus) as bot:
        post, answer_id = await bot.ask()
        await bot.submit_reason(await bot.vote_down(post, answer_id, "U_BOB"), "U_BOB", "unclear")
        reports = await asyncio.gather(bot.flush(), bot.flush(), bot.flush())
        assert sum(r.sent for r in reports) == 1
        assert len(bot.owner_messages(DBA)) == 1


async def test_an_owner_name_mapped_only_in_another_tenant_is_never_reached(
    settings: Settings, store: Store, embedder: FastEmbedder, tmp_path: Path
) -> None:
    mine = write_owned_corpus(tmp_path / "mine", {FAILOVER: "sre-team"})
    theirs = write_owned_corpus(tmp_path / "theirs", {FAILOVER: "sre-team"})
    async with owner_harness(settings, store, embedder, theirs) as other:
        await map_owner(store, other.tenant, "sre-team", "C0THEIRS")
        await set_default_owner(store, other.tenant, "C0THEIRDEFAULT")
    async with owner_harness(settings, store, embedder, mine) as bot:
        post, answer_id = await bot.ask()
        await bot.submit_reason(await bot.vote_down(post, answer_id, "U_BOB"), "U_BOB", "unclear")
        report = await bot.flush()
        assert (report.sent, report.unrouted) == (0, 1)
        assert await outcomes(bot) == [("database/primary-failover", "unrouted", None)]
        channels = {c.body.get("channel") for c in bot.slack.calls_to("chat.postMessage")}
        assert channels == {"C_INCIDENT"}  # only the answer itself

        # This tenant's own fallback is used for its next note; the other's never is.
        await set_default_owner(store, bot.tenant, "#runbook-feedback")
        await bot.submit_reason(await bot.vote_down(post, answer_id, "U_CAROL"), "U_CAROL", "other")
        assert (await bot.flush()).sent == 1
        assert len(bot.owner_messages("#runbook-feedback")) == 1
        assert not bot.owner_messages("C0THEIRS") and not bot.owner_messages("C0THEIRDEFAULT")


async def test_an_owner_name_resolves_through_the_owner_map_and_a_user_group_to_its_members(
    settings: Settings, store: Store, embedder: FastEmbedder, tmp_path: Path
) -> None:
    corpus = write_owned_corpus(tmp_path, {FAILOVER: "team-data-platform"})
    async with owner_harness(settings, store, embedder, corpus) as bot:
        await map_owner(store, bot.tenant, "team-data-platform", "S0DATA")
        bot.slack.usergroups["S0DATA"] = ["U0ANN", "U0BEN"]
        post, answer_id = await bot.ask()
        await bot.submit_reason(await bot.vote_down(post, answer_id, "U_BOB"), "U_BOB", "unclear")
        assert (await bot.flush()).sent == 1
        assert len(bot.owner_messages("U0ANN")) == len(bot.owner_messages("U0BEN")) == 1


async def test_serve_upkeep_flushes_pending_notes_by_itself(
    settings: Settings, store: Store, embedder: FastEmbedder, tmp_path: Path
) -> None:
    corpus = write_owned_corpus(tmp_path, {FAILOVER: DBA})
    async with owner_harness(settings, store, embedder, corpus) as bot:
        post, answer_id = await bot.ask()
        await bot.submit_reason(await bot.vote_down(post, answer_id, "U_BOB"), "U_BOB", "unclear")
        messenger = SlackOwnerMessenger(
            store=store, client=bot.client, installations=None, api_url=bot.slack.base_url
        )
        quick = settings.model_copy(update={"owner_flush_interval_s": 0.05})
        async with upkeep_running(store, {"slack": messenger}, quick):
            await bot.slack.wait_for("chat.postMessage", where=lambda c: c.body["channel"] == DBA)
        assert (await flush_owner_notes(store, {"slack": messenger}, batch_minutes=60)).sent == 0
