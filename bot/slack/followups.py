"""Thread follow-ups without a mention: a person's question in a thread the bot answered in.

Quiet by default where unsure. Only a message that reads as a question (a question mark, or a
question word first) gets an answer; one addressed to someone else (``<@U…>`` of another
person), thanks, acknowledgements and emoji get nothing, as does an abstention, a thread the bot
never answered, one it was asked to stop following, and a channel with follow-ups switched off.
The thread's first question (or alert) rides along as retrieval context: "what about the
replica?" means little on its own.
"""

from __future__ import annotations

import re
from typing import Any

from slack_sdk.web.async_client import AsyncWebClient

from bot.core.answers_store import Placement
from bot.core.channel_settings import channel_settings
from bot.core.threads import followed_thread
from bot.slack.alerts import fit_question
from bot.slack.answering import Bot, render
from bot.slack.progress import visible_progress
from bot.slack.tenancy import origin_of, tenant_of

_USER_MENTION = re.compile(r"<@([UW][A-Z0-9_]+)(?:\|[^>]*)?>")
_EMOJI_CODE = re.compile(r":[a-z0-9_+'-]+:")
_QUESTION_WORDS = frozenset(
    "what how why where when which who whom whose can could should would is are am was were "
    "do does did will shall may might has have any anything explain show tell give list".split()
)
# Whole messages that only thank or acknowledge, whatever their punctuation.
_ACKS = frozenset(
    "thanks thank you thx ty tysm cheers ok okay k kk cool great nice got it perfect awesome "
    "lgtm np sure yes yep yeah no nope done ack noted will do sounds good makes sense 👍 🙏 "
    "much a lot appreciated".split()
)


def reads_as_question_to_bot(text: str, bot_user_id: str | None) -> bool:
    """A person's thread reply the bot should take as a question to itself."""
    others = {u for u in _USER_MENTION.findall(text) if u != bot_user_id}
    if others:
        return False  # addressed to someone else (or to several people)
    words = re.findall(r"[\w'’-]+", _EMOJI_CODE.sub(" ", _USER_MENTION.sub(" ", text)).lower())
    if not words or all(word in _ACKS for word in words):
        return False
    return "?" in text or words[0] in _QUESTION_WORDS


async def answer_follow_up(
    bot: Bot, client: AsyncWebClient, body: dict[str, Any], event: dict[str, Any], bot_user: str
) -> None:
    """Answer a thread reply if it is a follow-up to the bot; otherwise (and on abstention) stay
    silent. The one entry a job queue would run for follow-ups."""
    text, user = event.get("text"), event.get("user")
    channel, ts, thread_ts = event.get("channel"), event.get("ts"), event.get("thread_ts")
    if event.get("bot_id") or not (isinstance(text, str) and isinstance(user, str)):
        return  # follow-ups come from people
    if not (isinstance(channel, str) and isinstance(ts, str) and isinstance(thread_ts, str)):
        return
    if mentions_user(text, bot_user) or not reads_as_question_to_bot(text, bot_user):
        return
    origin = origin_of(body)
    tenant = await tenant_of(bot.store, origin)
    team = origin.team_id or ""
    if tenant is None or not (await channel_settings(bot.store, tenant, team, channel)).follow_ups:
        return
    topic = await followed_thread(bot.store, tenant, team, channel, thread_ts)
    if topic is None:
        return
    asked = " ".join(text.split())
    question = fit_question(f"{asked}\n{topic.question}", bot.settings.max_question_chars)
    placement = Placement(
        entry="follow_up",
        team_id=team,
        enterprise_id=origin.enterprise_id or "",
        channel_id=channel,
        thread_ts=thread_ts,
        ephemeral=False,
    )
    async with visible_progress(client, channel=channel, ts=ts, thread_ts=thread_ts):
        result = await bot.ask(tenant, question, service=topic.service, placement=placement)
        if result.status != "answered":
            bot.metrics.answers_posted.labels("follow_up", "silent").inc()
            return
        card = render(
            result,
            entry="follow_up",
            question=asked,
            ephemeral=False,
            stale_after_days=bot.settings.stale_after_days,
        )
        message_ts = await bot.delivery.post(
            client, channel=channel, thread_ts=thread_ts, card=card
        )
    bot.metrics.answers_posted.labels("follow_up", result.status).inc()
    await bot.answers.record_delivery(
        tenant, str(result.answer_id), message_ts=message_ts, ephemeral=False
    )


def mentions_user(text: object, user_id: str | None) -> bool:
    return bool(user_id) and isinstance(text, str) and f"<@{user_id}" in text
