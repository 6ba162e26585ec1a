"""The Teams message action "Draft a runbook from this thread" (command id ``draftRunbook``).

``composeExtension/fetchTask`` reads the acted-on message's thread through Graph replies, drafts
it (``bot.core.drafts``) and answers with the review dialog; ``composeExtension/submitAction``
checks the asker again, stores the reviewed text and queues a ``teams.draft_deliver`` job (Teams
waits 5 s at most; the forge may take longer). Who may: the tenant's admins
(``bot.core.admin``), runbook owners, or anyone with ``RUNBOOK_DRAFT_PR_ANYONE=true``. Teams
offers a message action only on a message the asker can see, so the invoke itself shows that
the asker is in the channel.
"""

from __future__ import annotations

import logging
from typing import Any

from microsoft_agents.activity import Activity
from microsoft_agents.hosting.core import TurnContext

from bot.core.admin.admins import Actor, is_admin
from bot.core.drafts.compose import compose_draft
from bot.core.drafts.headings import tenant_headings
from bot.core.drafts.permissions import REFUSED, may_open_pull_request
from bot.core.drafts.render import NOTHING_TO_DRAFT, render_markdown, render_sections
from bot.core.drafts.review import nearest_runbook, reviewed_markdown
from bot.core.drafts.store import DraftStore, draft_id_for
from bot.core.drafts.thread import IncidentThread
from bot.teams.bot import TeamsBot
from bot.teams.drafts.dialog import (
    DESTINATION_INPUT,
    OWNER_INPUT,
    TEXT_INPUT,
    TITLE_INPUT,
    draft_dialog,
)
from bot.teams.drafts.thread import read_teams_thread
from bot.teams.graph.client import GraphClient, GraphError
from bot.teams.invokes import as_dict, message_task, respond, value_of
from bot.teams.jobs.requests import reference_json
from bot.teams.tenancy import find_teams_tenant
from bot.teams.threads import aad_tenant_of, alert_thread_reference, channel_of, team_group_of

logger = logging.getLogger(__name__)

DELIVER = "teams.draft_deliver"
NOT_CONNECTED = "This organisation is not connected to runbooks yet."
NOT_A_THREAD = "Drafting works on a message of a channel thread (chats have no threads)."
UNREADABLE = (
    "The thread could not be read through Microsoft Graph (the team's owner must consent to "
    "ChannelMessage.Read.Group for runbook-bot). Nothing was drafted."
)
ON_ITS_WAY = "The runbook is on its way: its link will be posted in the thread."
ALREADY = "This thread was drafted already: "


class DraftAction:
    def __init__(self, bot: TeamsBot, graph: GraphClient) -> None:
        self.bot = bot
        self.graph = graph
        self.drafts = DraftStore(bot.store)

    async def fetch_task(self, context: TurnContext) -> None:
        await respond(context, await self._dialog(context.activity))

    async def submit_action(self, context: TurnContext) -> None:
        await respond(context, await self._submit(context.activity))

    async def _allowed(self, activity: Activity) -> tuple[str | None, str]:
        """The tenant, and why the asker may not open a pull request there ("" if they may)."""
        tenant = await find_teams_tenant(self.bot.store, aad_tenant_of(activity))
        if tenant is None:
            return None, NOT_CONNECTED
        user = _user(activity)
        admin = await is_admin(self.bot.store, tenant, Actor("teams", user))
        anyone = self.bot.settings.draft_pr_anyone
        if not await may_open_pull_request(
            self.bot.store, tenant, user, admin=admin, anyone=anyone
        ):
            return tenant, REFUSED
        return tenant, ""

    async def _dialog(self, activity: Activity) -> dict[str, Any]:
        tenant, refused = await self._allowed(activity)
        if tenant is None or refused:
            return message_task(refused)
        where = _where(activity)
        aad = aad_tenant_of(activity)
        if where is None or aad is None:
            return message_task(NOT_A_THREAD)
        team, channel, root = where
        try:
            thread = await read_teams_thread(self.graph, aad, team, channel, root)
        except GraphError as exc:
            logger.warning("draft: thread unreadable: %s", exc)
            return message_task(UNREADABLE)
        if thread is None:
            return message_task(UNREADABLE)
        draft = compose_draft(thread, await tenant_headings(self.bot.store, tenant))
        if draft.empty:
            return message_task(NOTHING_TO_DRAFT)
        earlier = await self.drafts.get(tenant, draft_id_for("teams", team, channel, root))
        if earlier is not None and earlier.state in ("submitted", "open"):
            return message_task(ALREADY + (earlier.link or earlier.title))
        asker = _name(activity)
        row = await self.drafts.save(
            tenant=tenant,
            surface="teams",
            team_id=team,
            channel_id=channel,
            thread_id=root,
            thread_link=thread.link,
            title=draft.title,
            markdown=render_markdown(draft, owner=asker),
            redactions=draft.redactions,
            drafted_by=_user(activity),
        )
        nearest = await nearest_runbook(self.bot.service, tenant, draft)
        return draft_dialog(
            tenant=tenant,
            draft_id=row.draft_id,
            title=draft.title,
            body="\n".join(render_sections(draft)).strip() + "\n",
            owner=asker,
            summary=_summary(thread, len(draft.steps), draft.redactions),
            nearest=None if nearest is None else (nearest.document_id, nearest.title),
        )

    async def _submit(self, activity: Activity) -> dict[str, Any] | None:
        data = as_dict(value_of(activity).get("data"))
        tenant, refused = await self._allowed(activity)
        # Checked again: a submission is a request of its own, forgeable apart from the dialog.
        if tenant is None or refused:
            return message_task(refused)
        row = await self.drafts.get(tenant, str(data.get("draft_id") or ""))
        if row is None or data.get("tenant") != tenant:
            return message_task("That draft is gone; draft the thread again.")
        title = " ".join(str(data.get(TITLE_INPUT) or "").split())[:200]
        if not title:
            return message_task("A runbook needs a title; nothing was sent.")
        owner = " ".join(str(data.get(OWNER_INPUT) or "").split())[:200] or None
        text = data.get(TEXT_INPUT)
        markdown = reviewed_markdown(title, owner, text) if isinstance(text, str) else row.markdown
        if not await self.drafts.submit(
            tenant, row.draft_id, title=title, markdown=markdown, by=_user(activity)
        ):
            return message_task(ON_ITS_WAY)  # a double submit: one delivery
        payload = {
            "tenant": tenant,
            "draft_id": row.draft_id,
            "owner": owner,
            "asked_by": _name(activity),
            "destination": str(data.get(DESTINATION_INPUT) or "new"),
            "reference": reference_json(alert_thread_reference(activity, row.thread_id)),
        }
        await self.bot.accept(f"teams:{DELIVER}:{row.draft_id}", DELIVER, payload)
        return None  # 200, no body: the dialog closes, the link follows in the thread


def _where(activity: Activity) -> tuple[str, str, str] | None:
    """The Graph team id (the team's AAD group), the channel and the thread's root message."""
    payload = as_dict(value_of(activity).get("messagePayload"))
    root = payload.get("replyToId") or payload.get("id")
    team = team_group_of(activity)
    channel = channel_of(activity)
    if not (isinstance(root, str) and root and isinstance(team, str) and team and channel):
        return None
    return team, channel, root


def _user(activity: Activity) -> str:
    person = activity.from_property
    return (person.aad_object_id or person.id or "") if person else ""


def _name(activity: Activity) -> str:
    person = activity.from_property
    return str((person.name if person else None) or _user(activity) or "a responder in Teams")


def _summary(thread: IncidentThread, steps: int, redactions: int) -> str:
    secrets = f", **{redactions}** secret(s) redacted" if redactions else ""
    return (
        f"Drafted from **{len(thread.messages)}** messages of the thread: **{steps}** "
        f"command(s){secrets}. Every step cites the message it came from; review it before it "
        "goes out."
    )
