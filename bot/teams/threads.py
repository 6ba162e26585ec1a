"""Teams conversation ids: threads, dedupe keys, and where an activity's answer belongs.

A channel thread is the conversation id ``19:…@thread.tacv2;messageid=ROOT``; ``replyToId``
does not thread in Teams. Group and 1:1 chats have no threads.
"""

from __future__ import annotations

from typing import Any

from microsoft_agents.activity import Activity, ConversationReference

_THREAD = ";messageid="


def base_conversation_id(conversation_id: str) -> str:
    """The channel or chat id without the thread suffix (``;messageid=…``)."""
    return conversation_id.split(";")[0]


def thread_root(conversation_id: str) -> str | None:
    _, found, root = conversation_id.partition(_THREAD)
    return root.split(";")[0] or None if found else None


def thread_conversation_id(conversation_id: str, root: str) -> str:
    return f"{base_conversation_id(conversation_id)}{_THREAD}{root}"


def dedupe_key(activity: Activity) -> str | None:
    """(conversation without ``;messageid``, activity id): one answer per delivered activity."""
    conversation = activity.conversation.id if activity.conversation else None
    if not conversation or not activity.id:
        return None
    return post_key(base_conversation_id(conversation), activity.id)


def post_key(channel_or_chat: str, message_id: str) -> str:
    """A message's dedupe key, whichever way it arrived: as an activity (its id is the Teams
    message id) or through a Graph change notification."""
    return f"teams:{channel_or_chat}:{message_id}"


def aad_tenant_of(activity: Activity) -> str | None:
    """The AAD tenant: ``conversation.tenantId``, else ``channelData.tenant.id``; lower-case."""
    tenant = activity.conversation.tenant_id if activity.conversation else None
    if not tenant:
        tenant = _dig(activity.channel_data, "tenant", "id")
    return tenant.strip().lower() if isinstance(tenant, str) and tenant.strip() else None


def channel_of(activity: Activity) -> str | None:
    """The Teams channel a channel conversation is in (what ``teams channel map`` names)."""
    channel = _dig(activity.channel_data, "channel", "id")
    if isinstance(channel, str) and channel:
        return channel
    conversation = activity.conversation
    if conversation is not None and conversation.conversation_type == "channel" and conversation.id:
        return base_conversation_id(conversation.id)
    return None


def team_group_of(activity: Activity) -> str | None:
    """The team's AAD group id (what Graph calls the team), when Teams sent it."""
    group = _dig(activity.channel_data, "team", "aadGroupId")
    return group if isinstance(group, str) and group else None


def alert_thread_reference(activity: Activity, message_id: str | None) -> ConversationReference:
    """Where a message action's answer goes: the acted-on post's thread in a channel; the
    chat itself elsewhere (chats have no threads)."""
    reference = activity.get_conversation_reference()
    conversation = reference.conversation
    in_channel = conversation is not None and conversation.conversation_type == "channel"
    if conversation is None or not in_channel or not _is_message_id(message_id):
        return reference.model_copy(update={"activity_id": None})
    threaded = conversation.model_copy(
        update={"id": thread_conversation_id(conversation.id, str(message_id))}
    )
    return reference.model_copy(update={"conversation": threaded, "activity_id": message_id})


def _is_message_id(value: str | None) -> bool:
    # Teams message ids are epoch-millisecond numbers; "0" is not a message.
    return bool(value) and str(value).isdigit() and str(value).strip("0") != ""


def _dig(data: Any, *keys: str) -> Any:
    for key in keys:
        if isinstance(data, dict):
            data = data.get(key)
        else:
            data = getattr(data, key, None)
    return data
