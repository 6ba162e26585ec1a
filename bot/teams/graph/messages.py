"""A channel message announced by Graph, read into the same alert-post job as one the bot was
sent as an activity.

``teams.graph_message`` fetches the message (``GET /teams/{team}/channels/{channel}/messages/
{id}``) and reads it exactly as ``bot.teams.incident.channel_messages`` reads an activity: the same
card and HTML reading, the same classifier, firing alerts only. It then claims the post's own
dedupe key (``post_key``: the same key its activity would claim) and queues ``teams.alert_post``
there; so a post delivered both ways is answered once, and the repeat window, mutes, the
channel switch and the answer in the post's thread are the alert-post job's, unchanged. The
answer goes through the Bot Connector of the channel's latest answer, else TEAMS_SERVICE_URL.

Only root posts by others that do not mention the bot: replies are follow-ups (bot delivery
carries people's messages), a mention is the bot's own delivery's to answer, and the bot's own
posts are never alerts.
"""

from __future__ import annotations

import logging
from typing import Any

from microsoft_agents.activity import (
    ChannelAccount,
    ChannelId,
    ConversationAccount,
    ConversationReference,
)

from bot.core.alerts.classifier import classify_alert_text
from bot.core.jobs.queue import Job
from bot.teams.alerts import read_message_payload
from bot.teams.bot import TeamsBot
from bot.teams.graph.client import GraphClient
from bot.teams.incident.channel_requests import ALERT_POST, ChannelPostRequest
from bot.teams.threads import post_key, thread_conversation_id
from rag import Store

logger = logging.getLogger(__name__)

GRAPH_MESSAGE = "teams.graph_message"


class GraphMessageJob:
    def __init__(self, bot: TeamsBot, graph: GraphClient) -> None:
        self.bot = bot
        self.graph = graph

    async def run(self, job: Job) -> None:
        payload = job.payload
        aad, channel = str(payload["aad_tenant"]), str(payload["channel_id"])
        message_id = str(payload["message_id"])
        # A Graph failure raises: the queue tries again, as for any other job.
        message = await self.graph.channel_message(
            aad, str(payload["team_id"]), channel, message_id
        )
        if message is None:
            return  # deleted since
        learned = await channel_service_url(self.bot.store, str(payload["tenant"]), aad, channel)
        request = alert_post_request(
            message,
            app_id=self.bot.app_id,
            aad_tenant=aad,
            channel_id=channel,
            message_id=message_id,
            service_url=learned or self.bot.settings.teams_service_url,
        )
        if request is not None:
            await self.bot.accept(post_key(channel, message_id), ALERT_POST, request.payload())

    async def give_up(self, job: Job) -> None:
        logger.warning("Graph message job %s gave up; nothing posted", job.job_id)


def alert_post_request(
    message: dict[str, Any],
    *,
    app_id: str,
    aad_tenant: str,
    channel_id: str,
    message_id: str,
    service_url: str,
) -> ChannelPostRequest | None:
    """The alert-post job for a Graph ``chatMessage``, or None when it is not a firing alert
    for this path (a reply, a system message, the bot's own post or a mention of it)."""
    if message.get("replyToId") or message.get("messageType", "message") != "message":
        return None
    if message.get("deletedDateTime") or _sent_by(message, app_id) or _mentions(message, app_id):
        return None
    text = read_message_payload(
        {"body": message.get("body"), "attachments": message.get("attachments") or []}
    )
    alert = classify_alert_text(text)
    if alert is None or alert.state != "firing":
        return None
    thread = ConversationAccount(
        id=thread_conversation_id(channel_id, message_id),
        conversation_type="channel",
        is_group=True,
        tenant_id=aad_tenant,
    )
    reference = ConversationReference(
        activity_id=message_id,
        agent=ChannelAccount(id=f"28:{app_id}"),
        conversation=thread,
        channel_id=ChannelId("msteams"),
        service_url=service_url,
    )
    return ChannelPostRequest(
        reference=reference,
        aad_tenant=aad_tenant,
        channel_id=channel_id,
        thread_root=message_id,
        text=text.question,
        hints=text.hints,
    )


# The Bot Connector of the channel's latest answer: a Graph notification names none, and
# Microsoft's advice is to prefer a service URL that came with an activity (its region) over
# the global one (TEAMS_SERVICE_URL). Read through the answers_thread index.
_CHANNEL_SERVICE_URL = """
SELECT service_url FROM answers
WHERE tenant_id = %(tenant)s AND channel_id = %(channel)s AND team_id = %(aad)s
  AND service_url IS NOT NULL
ORDER BY created_at DESC
LIMIT 1
"""


async def channel_service_url(
    store: Store, tenant: str, aad_tenant: str, channel_id: str
) -> str | None:
    params = {"tenant": tenant, "aad": aad_tenant, "channel": channel_id}
    async with store.pool.connection() as conn:
        cur = await conn.execute(_CHANNEL_SERVICE_URL, params)
        row = await cur.fetchone()
    return str(row[0]) if row else None


def _sent_by(message: dict[str, Any], app_id: str) -> bool:
    sender = message.get("from")
    application = sender.get("application") if isinstance(sender, dict) else None
    return isinstance(application, dict) and application.get("id") == app_id


def _mentions(message: dict[str, Any], app_id: str) -> bool:
    for mention in message.get("mentions") or []:
        mentioned = mention.get("mentioned") if isinstance(mention, dict) else None
        application = mentioned.get("application") if isinstance(mentioned, dict) else None
        if isinstance(application, dict) and application.get("id") == app_id:
            return True
    return False
