"""Channel messages that reach the bot without a mention (the app's ``ChannelMessage.Read.Group``
consent): a new alert post, or a person's question in a thread.

Read from the activity alone before the request is answered, as Slack's intake reads its events:
a root post that announces a firing alert is queued as ``teams.alert_post``; a person's thread
reply that reads as a question to the bot as ``teams.follow_up``. Everything else gets nothing,
and nothing of it is kept: chatter, statements, thanks, replies addressed to someone else, the
bot's own posts, resolved or unclear notifications. Whether the channel switched these on, and
whether the bot follows the thread, are the jobs' checks (they need the database).
"""

from __future__ import annotations

from microsoft_agents.activity import Activity

from bot.core.alerts.classifier import classify_alert_text
from bot.core.alerts.followup_rules import reads_as_question
from bot.core.conversation import storable
from bot.teams.alerts import html_to_text, read_activity
from bot.teams.bot import TeamsBot
from bot.teams.incident.channel_requests import ALERT_POST, FOLLOW_UP, ChannelPostRequest
from bot.teams.threads import (
    aad_tenant_of,
    channel_of,
    dedupe_key,
    thread_conversation_id,
    thread_root,
)


def is_unprompted(activity: Activity) -> bool:
    """A standard-channel message that does not mention the bot: Teams delivers these only
    because of the resource-specific consent."""
    conversation = activity.conversation
    if conversation is None or conversation.conversation_type != "channel":
        return False
    return not mentions_bot(activity)


def mentions_bot(activity: Activity) -> bool:
    bot_id = activity.recipient.id if activity.recipient else None
    return any(m.mentioned and m.mentioned.id == bot_id for m in activity.get_mentions())


async def take_channel_message(bot: TeamsBot, activity: Activity) -> None:
    conversation_id = activity.conversation.id if activity.conversation else ""
    channel = channel_of(activity)
    if not (conversation_id and channel and activity.id) or is_own_post(bot, activity):
        return
    root = thread_root(conversation_id)
    if root is None or root == activity.id:
        await _take_post(bot, activity, conversation_id, channel)
    else:
        await _take_reply(bot, activity, channel, root)


def is_own_post(bot: TeamsBot, activity: Activity) -> bool:
    sender = (activity.from_property.id if activity.from_property else None) or ""
    recipient = activity.recipient.id if activity.recipient else None
    return sender == recipient or sender.removeprefix("28:") == bot.app_id


async def _take_post(bot: TeamsBot, activity: Activity, conversation_id: str, channel: str) -> None:
    text = read_activity(activity)
    alert = classify_alert_text(text)
    if alert is None or alert.state != "firing":
        return
    root = str(activity.id)
    # The answer goes into the post's own thread, also when the post came with the bare
    # channel id.
    base = activity.get_conversation_reference()
    if base.conversation is None:
        return
    thread = base.conversation.model_copy(
        update={"id": thread_conversation_id(conversation_id, root)}
    )
    request = ChannelPostRequest(
        reference=base.model_copy(update={"conversation": thread, "activity_id": root}),
        aad_tenant=aad_tenant_of(activity),
        channel_id=channel,
        thread_root=root,
        text=text.question,
        hints=text.hints,
    )
    await bot.accept(dedupe_key(activity), ALERT_POST, request.payload())


async def _take_reply(bot: TeamsBot, activity: Activity, channel: str, root: str) -> None:
    sender = (activity.from_property.id if activity.from_property else None) or ""
    if sender.startswith("28:") or addressed_to_someone(activity):
        return  # follow-ups come from people, and are addressed to nobody in particular
    asked = storable(" ".join(html_to_text(activity.text or "").split()))
    if not reads_as_question(asked):
        return
    reference = activity.get_conversation_reference().model_copy(update={"activity_id": root})
    request = ChannelPostRequest(
        reference=reference,
        aad_tenant=aad_tenant_of(activity),
        channel_id=channel,
        thread_root=root,
        text=asked,
    )
    await bot.accept(dedupe_key(activity), FOLLOW_UP, request.payload())


def addressed_to_someone(activity: Activity) -> bool:
    """The message mentions a person (or another app): it is theirs to answer."""
    bot_id = activity.recipient.id if activity.recipient else None
    return any(m.mentioned and m.mentioned.id != bot_id for m in activity.get_mentions())
