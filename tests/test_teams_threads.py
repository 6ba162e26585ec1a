"""Teams threading: conversation ids with ``;messageid=``, dedupe keys, where an action answers."""

from __future__ import annotations

from microsoft_agents.activity import Activity

from bot.teams.threads import (
    aad_tenant_of,
    alert_thread_reference,
    base_conversation_id,
    dedupe_key,
    thread_root,
)

CHANNEL = "19:alerts@thread.tacv2"


def activity(conversation_id: str, kind: str, **fields: object) -> Activity:
    return Activity.model_validate(
        {
            "type": "invoke",
            "id": "f:1",
            "channelId": "msteams",
            "serviceUrl": "https://smba.trafficmanager.net/amer/",
            "from": {"id": "29:u"},
            "recipient": {"id": "28:bot"},
            "conversation": {"id": conversation_id, "conversationType": kind, "tenantId": "AB"},
            **fields,
        }
    )


def test_thread_ids_split_and_join() -> None:
    assert base_conversation_id(f"{CHANNEL};messageid=17") == CHANNEL
    assert thread_root(f"{CHANNEL};messageid=17") == "17"
    assert thread_root(CHANNEL) is None


def test_dedupe_key_ignores_the_thread_but_not_the_activity() -> None:
    in_thread = activity(f"{CHANNEL};messageid=17", "channel")
    at_root = activity(CHANNEL, "channel")
    assert dedupe_key(in_thread) == dedupe_key(at_root) == f"teams:{CHANNEL}:f:1"
    assert dedupe_key(activity(CHANNEL, "channel", id="f:2")) != dedupe_key(at_root)


def test_an_action_in_a_channel_answers_in_the_posts_thread() -> None:
    reference = alert_thread_reference(activity(CHANNEL, "channel"), "1700000000001")
    assert reference.conversation.id == f"{CHANNEL};messageid=1700000000001"
    assert reference.activity_id == "1700000000001"


def test_an_action_in_a_chat_or_on_an_odd_id_answers_in_the_conversation() -> None:
    chat = alert_thread_reference(activity("19:chat@thread.v2", "groupChat"), "1700000000001")
    assert (chat.conversation.id, chat.activity_id) == ("19:chat@thread.v2", None)
    odd = alert_thread_reference(activity(CHANNEL, "channel"), "0")
    assert (odd.conversation.id, odd.activity_id) == (CHANNEL, None)


def test_aad_tenant_is_read_lower_case_with_channel_data_as_fallback() -> None:
    assert aad_tenant_of(activity(CHANNEL, "channel")) == "ab"
    bare = Activity.model_validate(
        {"type": "message", "conversation": {"id": "c"}, "channelData": {"tenant": {"id": "CD"}}}
    )
    assert aad_tenant_of(bare) == "cd"
