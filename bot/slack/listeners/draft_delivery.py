"""``slack.draft_deliver``: a reviewed draft delivered (pull / merge request, Confluence draft
page), its link posted in the thread and sent to the runbook's owner; with no writable source
or a read-only token, the Markdown goes into the thread as a file instead, with why."""

from __future__ import annotations

import logging
from typing import Any

import aiohttp
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.core.drafts.deliver import deliver_reviewed
from bot.core.drafts.forge_http import DeliveryError
from bot.core.drafts.review import KINDS
from bot.core.drafts.store import DraftRow, DraftStore
from bot.core.jobs.queue import Job
from bot.slack.answering import Bot

logger = logging.getLogger(__name__)

DELIVER = "slack.draft_deliver"


class DeliverJob:
    def __init__(self, bot: Bot) -> None:
        self.bot = bot
        self.drafts = DraftStore(bot.store)

    async def run(self, job: Job) -> None:
        asked: dict[str, Any] = job.payload.get("runbook_draft") or {}
        row = await self.drafts.get(str(asked.get("tenant")), str(asked.get("draft_id")))
        client = await self.bot.clients.for_request(job.payload)
        if row is None or client is None:
            return
        if row.state == "open" and row.link:
            await self._tell(client, row, row.link, "pull request", asked.get("owner"))
            return
        user = str((job.payload.get("user") or {}).get("id") or row.submitted_by or "")
        outcome = await deliver_reviewed(
            self.bot.store,
            row,
            destination=str(asked.get("destination") or "new"),
            asked_by=await _name_of(client, user),
            settings=self.bot.settings,
            last_attempt=job.exhausted,
        )
        if isinstance(outcome, DeliveryError):
            await self._as_file(client, row, outcome)
            return
        kind = KINDS.get(outcome.kind, "draft")
        await self._tell(client, row, outcome.link, kind, asked.get("owner"))

    async def give_up(self, job: Job) -> None:
        asked: dict[str, Any] = job.payload.get("runbook_draft") or {}
        row = await self.drafts.get(str(asked.get("tenant")), str(asked.get("draft_id")))
        client = await self.bot.clients.for_request(job.payload)
        if row is None or client is None or row.state == "open":
            return
        error = DeliveryError("unavailable", "the runbook source did not answer in time")
        await self.drafts.failed(row.tenant_id, row.draft_id, error.message)
        await self._as_file(client, row, error)

    async def _tell(
        self, client: AsyncWebClient, row: DraftRow, link: str, kind: str, owner: object
    ) -> None:
        text = f"📝 A runbook drafted from this thread is ready for review: <{link}|{row.title}>"
        text += f" ({kind})"
        await client.chat_postMessage(channel=row.channel_id, thread_ts=row.thread_id, text=text)
        if isinstance(owner, str) and owner:
            note = (
                f"📝 You were named owner of a runbook drafted from <{row.thread_link}|an incident "
                f"thread>: <{link}|{row.title}> ({kind}). Please review it."
            )
            try:
                await client.chat_postMessage(channel=owner, text=note)
            except SlackApiError as exc:
                logger.warning(
                    "could not tell the owner of draft %s: %s",
                    row.draft_id,
                    exc.response.get("error"),
                )

    async def _as_file(self, client: AsyncWebClient, row: DraftRow, exc: DeliveryError) -> None:
        why = {
            "read_only": f"The runbook source refused to write ({exc.message}).",
            "no_source": "This workspace's runbooks have no git or Confluence source to write to.",
        }.get(exc.code, f"It could not be delivered: {exc.message}.")
        text = f"📝 {why} Here is the runbook drafted from this thread, to add by hand."
        try:
            await client.files_upload_v2(
                channel=row.channel_id,
                thread_ts=row.thread_id,
                content=row.markdown,
                filename=f"{row.draft_id}.md",
                title=row.title,
                initial_comment=text,
            )
        except (SlackApiError, KeyError, TypeError, aiohttp.ClientError):
            await client.chat_postMessage(
                channel=row.channel_id,
                thread_ts=row.thread_id,
                text=f"{text}\n```\n{row.markdown[:35000]}\n```",
            )


async def _name_of(client: AsyncWebClient, user: str) -> str:
    """How a pull request names the asker: their Slack name, and their id to find them by."""
    if not user:
        return "a responder in Slack"
    try:
        info = (await client.users_info(user=user)).get("user") or {}
    except SlackApiError:
        info = {}
    name = (info.get("profile") or {}).get("real_name") or info.get("real_name")
    return f"{name} (Slack user {user})" if name else f"Slack user {user}"
