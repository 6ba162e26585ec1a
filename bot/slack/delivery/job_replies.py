"""What every Slack job shares: queuing a request, and replying once in a thread or privately.

A Slack job's payload is the verified request body itself (minus the legacy verification
token), so a handler reads it exactly as a listener would. Replies in a thread (or top-level in
a DM) carry the job id in message metadata and are looked for before a re-run posts; private
replies go through the request's response_url while it lives (30 minutes, 5 uses) and to a DM
after that.
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass
from typing import Any

from slack_bolt.context.async_context import AsyncBoltContext
from slack_bolt.context.respond.async_respond import AsyncRespond
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.core.jobs.queue import Job, JobRequest, JobTenant
from bot.slack.answering import Bot
from bot.slack.blocks import Card
from bot.slack.delivery.posts import DeliveryError, PostTag, outcome_unknown, slack_error
from bot.slack.tenancy import origin_of, with_installation

logger = logging.getLogger(__name__)

MENTION = "slack.mention"
COMMAND = "slack.command"
SHORTCUT = "slack.shortcut"
RETRY = "slack.retry"
# Messages the bot answers unasked (bot.slack.message_events routes them at intake).
ALERT_POST = "slack.alert_post"
FOLLOW_UP = "slack.follow_up"
DIRECT_MESSAGE = "slack.direct_message"
# Slack's limit is 30 minutes; past this a response_url reply may arrive after it expired.
RESPONSE_URL_LIFETIME_S = 25 * 60


async def queue_request(
    bot: Bot, kind: str, key: str | None, body: dict[str, Any], context: AsyncBoltContext
) -> None:
    """Claim and queue a listener's request (before its ack). ``key``: its delivery id; a
    request without one cannot be deduplicated and gets a fresh key."""
    key = f"slack:{kind}:{key}" if key else f"slack:{kind}:{uuid.uuid4()}"
    await bot.intake.first_delivery(key, job_request(kind, key, with_installation(body, context)))


def job_request(kind: str, key: str, body: dict[str, Any]) -> JobRequest:
    """The job for a verified request; its tenant is the installation's (the queue takes
    turns by tenant), found from the payload alone, as the job itself will find it."""
    payload = {name: value for name, value in body.items() if name != "token"}
    origin = origin_of(body)
    tenant = JobTenant(slack_team_id=origin.team_id, slack_enterprise_id=origin.enterprise_id)
    return JobRequest(kind=kind, dedupe_key=key, payload=payload, tenant=tenant)


def permanent(exc: Exception) -> bool:
    """A Slack refusal that a retry would meet again (``invalid_blocks``, ``not_authed``…)."""
    return (
        isinstance(exc, SlackApiError)
        and not outcome_unknown(exc)
        and slack_error(exc) != "ratelimited"
    )


@dataclass(frozen=True)
class ThreadReply:
    """Cards for one job in one thread, each posted at most once. Without ``thread_ts`` the
    cards go top-level (a DM's answers do), and are looked for in the channel's history."""

    bot: Bot
    client: AsyncWebClient
    job: Job
    channel: str
    thread_ts: str | None
    since: str | None  # the asker's message: the job's cards come after it

    def tag(self, answer_id: str | None = None) -> PostTag:
        return PostTag(job_id=str(self.job.job_id), answer_id=answer_id, since=self.since)

    async def already_posted(self, *, even_first_run: bool = False) -> str | None:
        """An earlier run's card for this job, if it got as far as posting one (or this run's,
        ``even_first_run``: a run cut off by its deadline may have posted before it stopped)."""
        if not (self.job.rerun or even_first_run):
            return None
        return await self.bot.delivery.find_tagged(
            self.client, self.channel, self.thread_ts, self.tag()
        )

    async def send(
        self, card: Card, *, answer_id: str | None = None, look_first: bool = False
    ) -> str:
        """Post ``card`` once; ``look_first`` unless ``already_posted`` was just asked."""
        return await self.bot.delivery.post_once(
            self.client,
            channel=self.channel,
            thread_ts=self.thread_ts,
            card=card,
            tag=self.tag(answer_id),
            look_first=look_first and self.job.rerun,
        )


@dataclass(frozen=True)
class PrivateReply:
    """Replies to one person: through the response_url while it lives, then by DM."""

    bot: Bot
    client: AsyncWebClient | None
    job: Job
    response_url: str | None
    user_id: str | None

    async def send(self, card: Card, *, replace_original: bool = False) -> None:
        if self.response_url and self.job.age_s < RESPONSE_URL_LIFETIME_S:
            respond = AsyncRespond(response_url=self.response_url)
            try:
                await self.bot.delivery.respond(respond, card, replace_original=replace_original)
                return
            except DeliveryError:  # expired or used up; a connection failure is retried instead
                logger.info("job %s: response_url refused; sending a DM", self.job.job_id)
        await self.direct_message(card)

    async def direct_message(self, card: Card) -> None:
        """The app's DM with the asker (``chat:write`` posts there by user id)."""
        if self.client is None or not self.user_id:
            logger.warning("job %s: no response_url and no one to DM", self.job.job_id)
            return
        tag = PostTag(job_id=str(self.job.job_id))
        await self.bot.delivery.post(
            self.client, channel=self.user_id, thread_ts=None, card=card, tag=tag
        )
