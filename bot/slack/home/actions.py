"""The App Home's controls. Each click is acked at once, then checked on the server: the view
must have been drawn for this workspace's current tenant, the actor must be one of its admins,
and what the click names (a channel, a source, an admin) must be the tenant's own. A refused
click changes nothing and the clicker's page says why; every click republishes the page.
"""

from __future__ import annotations

import logging
import re
import shutil
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from slack_bolt.async_app import AsyncApp
from slack_bolt.context.ack.async_ack import AsyncAck
from slack_bolt.context.async_context import AsyncBoltContext
from slack_sdk.web.async_client import AsyncWebClient

from bot.core.admin.admins import Actor
from bot.core.admin.changes import NOT_ADMIN, Outcome, own_source, refused
from bot.core.alerts.channel_settings import Switch
from bot.core.gaps.report import gap_report
from bot.core.sources.jobs import queue_sync
from bot.slack.blocks.text import escape_mrkdwn
from bot.slack.home import ids
from bot.slack.home.modal import add_source_modal, result_modal
from bot.slack.home.page import HomePage, Reader

logger = logging.getLogger(__name__)

STALE_VIEW = (
    "That page was drawn for another workspace or an earlier install of the bot, so nothing "
    "changed. This is the current page."
)
FOREIGN_CHANNEL = (
    "That channel is not one of this workspace's channels the bot is in; nothing changed."
)
_USER = re.compile(r"^[UW][A-Z0-9_]{2,30}$")
_GROUP = re.compile(r"^S[A-Z0-9_]{2,30}$")
_CHANNEL = re.compile(r"^[CG][A-Z0-9_]{2,30}$")
_CHANNEL_LINK = re.compile(r"&lt;#([CG][A-Z0-9_]{2,30})&gt;")


def register_home_actions(app: AsyncApp, page: HomePage) -> None:
    async def on_action(
        ack: AsyncAck, body: dict[str, Any], client: AsyncWebClient, context: AsyncBoltContext
    ) -> None:
        await ack()
        user = str((body.get("user") or {}).get("id") or "")
        action = (body.get("actions") or [{}])[0]
        reader = await page.reader(body, context)
        if not user or reader.tenant is None:
            await page.publish(client, reader, user)
            return
        view = body.get("view") or {}
        drawn = ids.ViewOrigin.decode(view.get("private_metadata"))
        if drawn != ids.ViewOrigin(reader.tenant, reader.team_id):
            logger.info("home action on a view of another tenant or workspace refused")
            await page.publish(client, reader, user, _notice(refused(STALE_VIEW)))
            return
        actor = await page.actor(client, reader, user)
        outcome = await _apply(page, client, reader, actor, action, body)
        if outcome is not None:
            await page.publish(client, reader, user, _notice(outcome))

    app.action(re.compile(r"^home\."))(on_action)


async def _apply(
    page: HomePage,
    client: AsyncWebClient,
    reader: Reader,
    actor: Actor,
    action: dict[str, Any],
    body: dict[str, Any],
) -> Outcome | None:
    """Do what ``action`` asks; None when a modal opened instead (that is the visible update)."""
    tenant = reader.tenant or ""
    action_id = str(action.get("action_id") or "")
    changes = page.changes
    if action_id == ids.GAP_DRAFT:
        return await _open_draft(page, client, tenant, str(action.get("value") or ""), body)
    if not await changes.may_change(tenant, actor):
        logger.info("home action %s by a non-admin refused", action_id)
        return refused(NOT_ADMIN)
    if action_id in (ids.CHANNEL_SWITCHES, ids.CHANNEL_SERVICE):
        return await _channel(page, client, reader, actor, action)
    if action_id in (ids.OWNER_USER, ids.OWNER_CHANNEL, ids.OWNER_GROUP, ids.OWNER_CLEAR):
        return await _owner(page, tenant, actor, action)
    if action_id == ids.ADMIN_ADD_USERS:
        users = [u for u in action.get("selected_users") or [] if _USER.match(str(u))]
        if not users:
            return refused("Pick a person to add.")
        done = [await changes.add_admin(tenant, actor, str(u), "user") for u in users]
        return Outcome(any(d.changed for d in done), "; ".join(d.message for d in done))
    if action_id == ids.ADMIN_ADD_GROUP:
        group = str((action.get("selected_option") or {}).get("value") or "")
        if not _GROUP.match(group):
            return refused("Pick a user group.")
        return await changes.add_admin(tenant, actor, group, "usergroup")
    if action_id == ids.ADMIN_REMOVE:
        return await changes.remove_admin(tenant, actor, str(action.get("value") or ""))
    if action_id in (ids.SOURCE_SYNC, ids.SOURCE_REMOVE):
        return await _source(page, tenant, actor, action_id, str(action.get("value") or ""))
    if action_id in (ids.SOURCE_ADD_GIT, ids.SOURCE_ADD_CONFLUENCE):
        kind = "git" if action_id == ids.SOURCE_ADD_GIT else "confluence"
        origin = ids.ViewOrigin(tenant, reader.team_id)
        await client.views_open(
            trigger_id=body.get("trigger_id"), view=add_source_modal(kind, origin)
        )
        return None
    return refused("That control is not known here; nothing changed.")


async def _channel(
    page: HomePage, client: AsyncWebClient, reader: Reader, actor: Actor, action: dict[str, Any]
) -> Outcome:
    tenant = reader.tenant or ""
    channel = str(action.get("block_id") or "").removeprefix(ids.CHANNEL_BLOCK)
    page.people.forget_channels(reader.team_id)  # the bot may have joined or left since
    known = {c for c, _ in await page.people.channels(client, reader.team_id)}
    if not _CHANNEL.match(channel) or channel not in known:
        return refused(FOREIGN_CHANNEL)
    if action.get("action_id") == ids.CHANNEL_SERVICE:
        service = str((action.get("selected_option") or {}).get("value") or ids.ANY_SERVICE)
        overview_services = await _services(page, tenant)
        if service != ids.ANY_SERVICE and service not in overview_services:
            return refused(f"This workspace has no runbooks for service {service!r}.")
        chosen = None if service == ids.ANY_SERVICE else service
        return await page.changes.set_channel_service(
            tenant, actor, reader.team_id, channel, chosen
        )
    chosen_values = {str(o.get("value")) for o in action.get("selected_options") or []}
    current = await _switches(page, tenant, reader.team_id, channel)
    done: list[Outcome] = []
    switch: Switch
    for switch in ("alerts", "follow_ups"):
        wanted = switch in chosen_values
        if wanted != current[switch]:
            done.append(
                await page.changes.set_channel_switch(
                    tenant,
                    actor,
                    reader.team_id,
                    channel,
                    switch,
                    wanted,
                )
            )
    if not done:
        return Outcome(False, "Those switches were already set that way.")
    return Outcome(any(d.changed for d in done), "; ".join(d.message for d in done))


async def _owner(page: HomePage, tenant: str, actor: Actor, action: dict[str, Any]) -> Outcome:
    action_id = action.get("action_id")
    if action_id == ids.OWNER_CLEAR:
        return await page.changes.set_default_owner(tenant, actor, None)
    target = str(
        action.get("selected_user")
        or action.get("selected_conversation")
        or (action.get("selected_option") or {}).get("value")
        or ""
    )
    if not target:
        return refused("Pick a person, a channel or a user group.")
    return await page.changes.set_default_owner(tenant, actor, target)


async def _source(
    page: HomePage, tenant: str, actor: Actor, action_id: str, source_id: str
) -> Outcome:
    if action_id == ids.SOURCE_REMOVE:
        outcome = await page.changes.remove_source(tenant, actor, source_id)
        if outcome.changed:
            shutil.rmtree(page.settings.data_dir / "sources" / source_id, ignore_errors=True)
        return outcome
    row = await own_source(page.store, tenant, source_id)
    if row is None:
        return refused("That source is gone (the page was out of date); nothing was synced.")
    await queue_sync(page.jobs, source_id=row.source_id, tenant=tenant, key=f"now-{uuid.uuid4()}")
    await page.changes.audit(tenant, actor, "source.sync_requested", row.name, None, None)
    return Outcome(
        True, f"sync of {row.name} queued; this page shows its outcome when you reopen it"
    )


async def _open_draft(
    page: HomePage, client: AsyncWebClient, tenant: str, gap_id: str, body: dict[str, Any]
) -> Outcome | None:
    report = await gap_report(
        page.store,
        tenant,
        since=timedelta(days=30),
        stale_after_days=page.settings.stale_after_days,
        now=datetime.now(UTC),
    )
    gap = report.gap(gap_id)
    if gap is None or gap.draft is None:
        return refused("That gap is closed or has no draft any more.")
    text = f"```{escape_mrkdwn(gap.draft)[:2800]}```"
    await client.views_open(
        trigger_id=body.get("trigger_id"), view=result_modal("Draft runbook", text)
    )
    return None


async def _switches(page: HomePage, tenant: str, team_id: str, channel: str) -> dict[str, bool]:
    async with page.store.pool.connection() as conn:
        cur = await conn.execute(
            "SELECT alerts, follow_ups FROM channel_settings "
            "WHERE tenant_id = %s AND team_id = %s AND channel_id = %s",
            (tenant, team_id, channel),
        )
        row = await cur.fetchone()
    return {"alerts": bool(row and row[0]), "follow_ups": bool(row and row[1])}


async def _services(page: HomePage, tenant: str) -> set[str]:
    async with page.store.pool.connection() as conn:
        cur = await conn.execute(
            "SELECT DISTINCT service FROM documents WHERE tenant_id = %s AND NOT superseded "
            "AND service IS NOT NULL",
            (tenant,),
        )
        return {str(s) for (s,) in await cur.fetchall()}


def _notice(outcome: Outcome) -> str:
    mark = "✅" if outcome.changed else "⛔" if outcome.message in (NOT_ADMIN, STALE_VIEW) else "ℹ️"
    # Our messages name channels as <#C…>: those (and only those) stay links.
    return f"{mark} " + _CHANNEL_LINK.sub(r"<#\1>", escape_mrkdwn(outcome.message))
