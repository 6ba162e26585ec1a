"""Message events at intake: which ones are work, and the job kind that does it.

Slack sends every message in the channels the bot is in (``message.channels``,
``message.groups``) and in its DMs (``message.im``). Most are none of the bot's business and get
nothing. The rest are queued as jobs before the ack, in the same transaction as their dedupe
claim, decided from the event alone (no database, no Web API call, so the ack stays fast):

- a person's DM → ``slack.direct_message`` (``bot.slack.listeners.direct_messages``);
- a message that mentions the bot → nothing here: its ``app_mention`` twin is queued
  (deduplicated on its own event id) and answered there, once, whichever copy came first;
- a person's reply in a thread that reads as a question to the bot → ``slack.follow_up``
  (``bot.slack.listeners.followups``: the job checks that the bot follows the thread);
- a top-level post announcing a firing alert → ``slack.alert_post``
(``bot.slack.listeners.alert_posts``:
  the job checks the channel's opt-in, mutes and the repeat window).

Edits, deletions, joins and other subtypes are ignored; so is anything the bot posted itself,
as far as the payload tells (its user id in ``authorizations``, its app id). A job checks again
with the bot id ``auth.test`` gives: a reply loop is the worst failure.
"""

from __future__ import annotations

from typing import Any

from bot.core.jobs.queue import JobRequest
from bot.slack.answering import Bot
from bot.slack.delivery.clients import authorized_bot_user
from bot.slack.delivery.job_replies import ALERT_POST, DIRECT_MESSAGE, FOLLOW_UP, job_request
from bot.slack.listeners.alert_posts import AlertPostJob, firing_alert
from bot.slack.listeners.direct_messages import DirectMessageJob, is_direct_question
from bot.slack.listeners.followups import FollowUpJob, is_follow_up_question, mentions_user
from bot.slack.listeners.mentions import mention_job

# Plain messages, integrations' posts, replies also sent to the channel, and files with text.
_ROUTED_SUBTYPES = frozenset({"bot_message", "thread_broadcast", "file_share"})


def register_message_events(bot: Bot) -> None:
    bot.job_handlers.register(ALERT_POST, AlertPostJob(bot))
    bot.job_handlers.register(FOLLOW_UP, FollowUpJob(bot))
    bot.job_handlers.register(DIRECT_MESSAGE, DirectMessageJob(bot))


def event_job(body: dict[str, Any]) -> JobRequest | None:
    """The job for an Events API delivery, if it is work: a mention, or a message the bot
    would answer (keyed by its event id)."""
    return mention_job(body) or message_job(body)


def message_job(body: dict[str, Any]) -> JobRequest | None:
    event, event_id = body.get("event"), body.get("event_id")
    if not (isinstance(event, dict) and event.get("type") == "message"):
        return None
    kind = message_kind(event, bot_user=authorized_bot_user(body), app_id=body.get("api_app_id"))
    if kind is None or not isinstance(event_id, str):
        return None
    return job_request(kind, event_id, body)


def message_kind(event: dict[str, Any], *, bot_user: str | None, app_id: object) -> str | None:
    """The job kind that answers ``event``, or None when the bot has nothing to say to it."""
    subtype = event.get("subtype")
    if not (subtype is None or (isinstance(subtype, str) and subtype in _ROUTED_SUBTYPES)):
        return None
    if _sent_by_this_app(event, bot_user, app_id):
        return None
    ts, thread_ts = event.get("ts"), event.get("thread_ts")
    if event.get("channel_type") == "im":
        return DIRECT_MESSAGE if is_direct_question(event) else None
    if mentions_user(event.get("text"), bot_user):
        return None
    if thread_ts and thread_ts != ts:
        return FOLLOW_UP if is_follow_up_question(event, bot_user) else None
    if isinstance(event.get("channel"), str) and isinstance(ts, str) and firing_alert(event):
        return ALERT_POST
    return None


def _sent_by_this_app(event: dict[str, Any], bot_user: str | None, app_id: object) -> bool:
    profile = event.get("bot_profile")
    apps = (event.get("app_id"), profile.get("app_id") if isinstance(profile, dict) else None)
    return (bot_user is not None and event.get("user") == bot_user) or (
        isinstance(app_id, str) and app_id in apps
    )
