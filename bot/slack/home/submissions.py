"""The Add a source modal's submission: checked and tested inside Slack's 3-second window when
it can be (errors shown in the modal's fields, or the modal closes and the page shows the new
source); a slow test turns the modal into "Testing…" and updates it with the outcome.

One submission is stored once: a double-submitted modal adds one source.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from typing import Any

from slack_bolt.async_app import AsyncApp
from slack_bolt.context.ack.async_ack import AsyncAck
from slack_bolt.context.async_context import AsyncBoltContext
from slack_sdk.web.async_client import AsyncWebClient

from bot.core.admin.changes import NOT_ADMIN, Outcome
from bot.core.admin.source_form import FieldErrors
from bot.core.sources.jobs import queue_sync
from bot.slack.blocks.text import escape_mrkdwn
from bot.slack.home import ids
from bot.slack.home.modal import draft_of, field_errors, origin_of, result_modal, testing_modal
from bot.slack.home.page import HomePage, Reader

logger = logging.getLogger(__name__)

ACK_BUDGET_S = 2.2
UNINSTALLED = "This workspace uninstalled runbook-bot while the form was open; nothing was added."


def register_home_submissions(app: AsyncApp, page: HomePage) -> None:
    async def on_submit(
        ack: AsyncAck, body: dict[str, Any], client: AsyncWebClient, context: AsyncBoltContext
    ) -> None:
        view = body.get("view") or {}
        user = str((body.get("user") or {}).get("id") or "")
        reader = await page.reader(body, context)
        drawn, _ = origin_of(view)
        if reader.tenant is None:
            await ack(response_action="errors", errors={"url": UNINSTALLED[:150]})
            return
        if drawn != ids.ViewOrigin(reader.tenant, reader.team_id):
            await ack(
                response_action="errors", errors={"url": "This form belongs to another workspace."}
            )
            return
        actor = await page.actor(client, reader, user)
        draft, _kept = draft_of(view)
        key = f"slack:{reader.team_id}:{view.get('id')}"
        work = asyncio.ensure_future(
            page.sources.submit(reader.tenant, actor, draft, submission_key=key)
        )
        page.tasks.adopt(work)
        done, _ = await asyncio.wait({work}, timeout=ACK_BUDGET_S)
        if not done:
            await ack(response_action="update", view=testing_modal(draft.url))
            await _finish_later(page, client, reader, user, work, str(view.get("id") or ""))
            return
        try:
            outcome = work.result()
        except FieldErrors as exc:
            await ack(response_action="errors", errors=field_errors(exc.errors, view))
            return
        if not outcome.changed and outcome.message == NOT_ADMIN:
            await ack(response_action="errors", errors={"url": NOT_ADMIN[:150]})
            return
        await ack()
        await _after(page, client, reader, user, outcome)

    app.view(ids.ADD_SOURCE_CALLBACK)(on_submit)


async def _finish_later(
    page: HomePage,
    client: AsyncWebClient,
    reader: Reader,
    user: str,
    work: asyncio.Future[Outcome],
    view_id: str,
) -> None:
    try:
        outcome = await work
    except FieldErrors as exc:
        lines = "\n".join(f"• *{k}*: {escape_mrkdwn(v)}" for k, v in exc.errors.items())
        text = f"Nothing was added:\n{lines}\nOpen *Add a source* again to fix it."
        await client.views_update(view_id=view_id, view=result_modal("Source not added", text))
        return
    title = "Source added" if outcome.changed else "Source not added"
    await client.views_update(
        view_id=view_id, view=result_modal(title, escape_mrkdwn(outcome.message))
    )
    await _after(page, client, reader, user, outcome)


async def _after(
    page: HomePage, client: AsyncWebClient, reader: Reader, user: str, outcome: Outcome
) -> None:
    if outcome.source_id is not None and reader.tenant is not None:
        await queue_sync(
            page.jobs, source_id=uuid.UUID(outcome.source_id), tenant=reader.tenant, key="first"
        )
    mark = "✅" if outcome.changed else "ℹ️"
    await page.publish(client, reader, user, f"{mark} {escape_mrkdwn(outcome.message)}")
