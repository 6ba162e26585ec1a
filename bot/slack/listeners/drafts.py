"""The "Draft a runbook from this thread" message shortcut and its review modal.

The shortcut reads the thread, drafts it and opens the modal within the trigger's 3 seconds
(no model call: the draft is deterministic). The submission is acked at once; the delivery is a
``slack.draft_deliver`` job, queued once per draft however often the modal is submitted.
"""

from __future__ import annotations

import logging
import uuid
from typing import Any

from slack_bolt.async_app import AsyncAck, AsyncApp, AsyncBoltContext
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.core.admin.admins import admin_groups, is_admin
from bot.core.drafts.compose import RunbookDraft, compose_draft
from bot.core.drafts.headings import tenant_headings
from bot.core.drafts.permissions import HIDDEN_CHANNEL, REFUSED, may_open_pull_request
from bot.core.drafts.render import NOTHING_TO_DRAFT, render_markdown, render_sections
from bot.core.drafts.review import nearest_runbook, reviewed_markdown
from bot.core.drafts.store import DraftStore, draft_id_for
from bot.slack.answering import Bot
from bot.slack.blocks.draft_modal import (
    SUBMIT_CALLBACK,
    Nearest,
    draft_modal,
    notice_modal,
    read_review,
)
from bot.slack.delivery.job_replies import job_request
from bot.slack.home.people import SlackPeople
from bot.slack.listeners.draft_delivery import DELIVER, DeliverJob
from bot.slack.tenancy import Origin, origin_of, tenant_of, with_installation
from bot.slack.thread_reader import read_thread
from rag import Store

logger = logging.getLogger(__name__)

DRAFT_CALLBACK = "draft_runbook"


def register_drafts(app: AsyncApp, bot: Bot) -> None:
    app.shortcut(DRAFT_CALLBACK)(DraftShortcut(bot).handle)
    app.view(SUBMIT_CALLBACK)(DraftSubmission(bot).handle)
    bot.job_handlers.register(DELIVER, DeliverJob(bot))


async def is_tenant_admin(
    people: SlackPeople, store: Store, client: AsyncWebClient, tenant: str, team: str, user: str
) -> bool:
    """A tenant admin as the App Home's settings know them (issue 39): a workspace admin or
    owner, the installer, or a person or user group an admin added."""
    groups = await admin_groups(store, tenant, "slack")
    return await is_admin(store, tenant, await people.actor(client, team, user, groups))


async def sees_channel(client: AsyncWebClient, channel: str, user: str) -> bool:
    """Public channels are visible to every member; a private one, a DM or a group DM only to
    its members."""
    try:
        info = (await client.conversations_info(channel=channel)).get("channel") or {}
        if not any(info.get(k) for k in ("is_private", "is_im", "is_mpim", "is_group")):
            return True
        cursor: str | None = None
        for _ in range(50):
            page = await client.conversations_members(channel=channel, limit=1000, cursor=cursor)
            if user in (page.get("members") or []):
                return True
            cursor = (page.get("response_metadata") or {}).get("next_cursor") or None
            if not cursor:
                return False
    except SlackApiError:
        return False
    return False


class DraftShortcut:
    def __init__(self, bot: Bot) -> None:
        self.bot = bot
        self.drafts = DraftStore(bot.store)
        self.people = SlackPeople()

    async def handle(
        self, ack: AsyncAck, body: dict[str, Any], client: AsyncWebClient, context: AsyncBoltContext
    ) -> None:
        self.bot.tasks.adopt_current()  # a drain waits for the modal too
        await ack()
        trigger = str(body.get("trigger_id") or "")
        view = await self._view(body, client, context)
        await client.views_open(trigger_id=trigger, view=view)

    async def _view(
        self, body: dict[str, Any], client: AsyncWebClient, context: AsyncBoltContext
    ) -> dict[str, Any]:
        origin = origin_of(body, context)
        user = str((body.get("user") or {}).get("id") or "")
        channel = str((body.get("channel") or {}).get("id") or origin.channel_id or "")
        message: dict[str, Any] = body.get("message") or {}
        thread_ts = str(message.get("thread_ts") or message.get("ts") or "")
        return await self.view_for(client, origin, user, channel, thread_ts)

    async def view_for(
        self, client: AsyncWebClient, origin: Origin, user: str, channel: str, thread_ts: str
    ) -> dict[str, Any]:
        """The review modal of one thread for ``user`` (or the notice why there is none): the
        shortcut's, and the "Write the runbook" button's (``bot.slack.listeners.draft_offers``)."""
        tenant = await tenant_of(self.bot.store, origin)
        if tenant is None:
            return notice_modal("Not connected", "This workspace is not connected to runbooks yet.")
        team = origin.team_id or ""
        admin = await is_tenant_admin(self.people, self.bot.store, client, tenant, team, user)
        anyone = self.bot.settings.draft_pr_anyone
        if not await may_open_pull_request(
            self.bot.store, tenant, user, admin=admin, anyone=anyone
        ):
            return notice_modal("Not allowed", REFUSED)
        if not channel or not thread_ts or not await sees_channel(client, channel, user):
            return notice_modal("Not allowed", HIDDEN_CHANNEL)
        thread = await read_thread(
            client, team_id=origin.team_id or "", channel=channel, thread_ts=thread_ts
        )
        draft = compose_draft(thread, await tenant_headings(self.bot.store, tenant))
        if draft.empty:
            return notice_modal("Nothing to draft", NOTHING_TO_DRAFT)
        earlier = await self.drafts.get(
            tenant, draft_id_for("slack", origin.team_id or "", channel, thread_ts)
        )
        if earlier is not None and earlier.state in ("submitted", "open"):
            where = f"<{earlier.link}|{earlier.title}>" if earlier.link else f"*{earlier.title}*"
            return notice_modal("Already drafted", f"This thread was drafted already: {where}.")
        row = await self.drafts.save(
            tenant=tenant,
            surface="slack",
            team_id=origin.team_id or "",
            channel_id=channel,
            thread_id=thread_ts,
            thread_link=thread.link,
            title=draft.title,
            markdown=render_markdown(draft, owner=user),
            redactions=draft.redactions,
            drafted_by=user,
        )
        return draft_modal(
            tenant=tenant,
            draft_id=row.draft_id,
            title=draft.title,
            body="\n".join(render_sections(draft)).strip() + "\n",
            owner=user,
            summary=_summary(draft, len(thread.messages)),
            nearest=await self._nearest(tenant, draft),
        )

    async def _nearest(self, tenant: str, draft: RunbookDraft) -> Nearest | None:
        """The existing runbook the draft is nearest to, when one is near enough to extend."""
        found = await nearest_runbook(self.bot.service, tenant, draft)
        return None if found is None else Nearest(found.document_id, found.title)


class DraftSubmission:
    def __init__(self, bot: Bot) -> None:
        self.bot = bot
        self.drafts = DraftStore(bot.store)
        self.people = SlackPeople()

    async def handle(
        self,
        ack: AsyncAck,
        body: dict[str, Any],
        client: AsyncWebClient,
        context: AsyncBoltContext,
    ) -> None:
        self.bot.tasks.adopt_current()  # the delivery is queued after the ack
        review = read_review(body.get("view") or {})
        if not review.title:
            await ack(response_action="errors", errors={"draft_title": "A runbook needs a title."})
            return
        user = str((body.get("user") or {}).get("id") or "")
        origin = origin_of(body, context)
        row = await self.drafts.get(review.tenant, review.draft_id)
        if row is None or await tenant_of(self.bot.store, origin) != review.tenant:
            await ack()
            return
        team = origin.team_id or ""
        admin = await is_tenant_admin(
            self.people, self.bot.store, client, review.tenant, team, user
        )
        anyone = self.bot.settings.draft_pr_anyone
        # Checked again on submit: a submission is a request of its own, forgeable apart.
        if not await may_open_pull_request(
            self.bot.store, review.tenant, user, admin=admin, anyone=anyone
        ):
            await ack(response_action="errors", errors={"draft_title": REFUSED[:150]})
            return
        await ack()
        markdown = (
            row.markdown
            if review.text is None
            else reviewed_markdown(review.title, review.owner, review.text)
        )
        if not await self.drafts.submit(
            review.tenant, review.draft_id, title=review.title, markdown=markdown, by=user
        ):
            logger.info("draft %s submitted again: already on its way", review.draft_id)
            return
        payload = with_installation(body, context)
        payload["runbook_draft"] = {
            "tenant": review.tenant,
            "draft_id": review.draft_id,
            "owner": review.owner,
            "destination": review.destination,
        }
        key = f"slack:{DELIVER}:{review.draft_id}:{uuid.uuid4().hex[:8]}"
        await self.bot.intake.first_delivery(key, job_request(DELIVER, key, payload))


def _summary(draft: RunbookDraft, messages: int) -> str:
    secrets = f", *{draft.redactions}* secret(s) redacted" if draft.redactions else ""
    return (
        f"Drafted from *{messages}* messages of <{draft.thread_link}|the thread>: "
        f"*{len(draft.steps)}* command(s){secrets}. Every step cites the message it came from; "
        "review it before it goes out."
    )
