"""Teams self-service: ``installationUpdate`` makes an installing organisation a tenant (its
installer the first admin) or starts its retention window; ``settings`` in the personal chat
shows the settings card; its ``Action.Execute`` verbs change a setting — authority checked on
the server for every one — and answer with the card redrawn, so it refreshes in place."""

from __future__ import annotations

import asyncio
import logging
import uuid
from typing import Any

from microsoft_agents.activity import Activity, Attachment
from microsoft_agents.hosting.core import AgentApplication, RouteRank, TurnContext, TurnState

from bot.core.admin.admins import Actor, is_admin
from bot.core.admin.changes import NOT_ADMIN, Outcome, SettingsChanges, own_source, refused
from bot.core.admin.lifecycle import (
    InstallPlace,
    is_uninstalled,
    mark_uninstalled,
    provision_install,
)
from bot.core.admin.overview import load_overview
from bot.core.admin.source_form import FieldErrors, SourceDraft, SourceForm
from bot.core.alerts.channel_settings import list_channel_switches
from bot.core.sources.jobs import queue_sync
from bot.core.sources.runs import cipher_or_none
from bot.teams.bot import TeamsBot
from bot.teams.cards import ADAPTIVE_CARD, Json, render_not_connected
from bot.teams.invokes import as_dict, card_response, respond, value_of
from bot.teams.settings import card as c
from bot.teams.tenancy import find_teams_tenant
from bot.teams.threads import aad_tenant_of
from rag import SourceAccess, delete_tenant

logger = logging.getLogger(__name__)

SETTINGS_WORDS = frozenset({"settings", "setup", "admin"})
# Teams waits a few seconds for an invoke's answer: a slower source test finishes afterwards,
# and its outcome is the notice of the clicker's next card.
ADD_BUDGET_S = 4.0


def register_settings(app: AgentApplication[TurnState], bot: TeamsBot) -> None:
    changes = SettingsChanges(bot.store)
    form = SourceForm(
        bot.store,
        cipher=cipher_or_none(bot.settings),
        access=SourceAccess.from_settings(bot.settings),
    )
    later: dict[tuple[str, str], Outcome] = {}  # (tenant, person) → a slow add's outcome

    async def on_installation(context: TurnContext, state: TurnState) -> None:
        await _installation(bot, context.activity)

    async def on_settings(context: TurnContext, state: TurnState) -> None:
        card = await _card(bot, context.activity, None)
        await context.send_activity(
            Activity(
                type="message", attachments=[Attachment(content_type=ADAPTIVE_CARD, content=card)]
            )
        )

    async def on_action(context: TurnContext, state: TurnState) -> None:
        activity = context.activity
        action = as_dict(value_of(activity).get("action"))
        verb, data = str(action.get("verb") or ""), as_dict(action.get("data"))
        outcome: Outcome | None
        if verb == c.SOURCE_ADD:
            outcome = await _add_source(bot, form, later, activity, data)
        else:
            outcome = await _apply(bot, changes, activity, verb, data)
        tenant = await _tenant(bot, activity)
        outcome = outcome or later.pop((tenant or "", _actor(activity).user_id), None)
        await respond(context, card_response(await _card(bot, activity, outcome)))

    app.add_route(_is_installation, on_installation, rank=RouteRank.FIRST)
    app.add_route(_is_settings_request, on_settings, rank=RouteRank.FIRST)
    app.add_route(_is_settings_action, on_action, is_invoke=True, rank=RouteRank.FIRST)


def _is_installation(context: TurnContext) -> bool:
    return context.activity.type == "installationUpdate"


def _is_settings_request(context: TurnContext) -> bool:
    activity = context.activity
    personal = activity.conversation is not None and activity.conversation.conversation_type in (
        "personal",
        None,
    )
    text = " ".join((activity.text or "").lower().split())
    return activity.type == "message" and personal and text in SETTINGS_WORDS


def _is_settings_action(context: TurnContext) -> bool:
    activity = context.activity
    if activity.type != "invoke" or activity.name != "adaptiveCard/action":
        return False
    verb = as_dict(value_of(activity).get("action")).get("verb")
    return isinstance(verb, str) and verb.startswith(c.VERB)


def _actor(activity: Activity) -> Actor:
    person = activity.from_property
    user = (person.aad_object_id or person.id or "") if person else ""
    return Actor("teams", user)


async def _tenant(bot: TeamsBot, activity: Activity) -> str | None:
    tenant = await find_teams_tenant(bot.store, aad_tenant_of(activity))
    if tenant is None or await is_uninstalled(bot.store, tenant):
        return None
    return tenant


async def _installation(bot: TeamsBot, activity: Activity) -> None:
    aad = aad_tenant_of(activity)
    if aad is None:
        return
    mapped = await find_teams_tenant(bot.store, aad)
    if str(activity.action or "").startswith("remove"):
        days = bot.settings.uninstall_retention_days
        if mapped and await mark_uninstalled(
            bot.store, mapped, surface="teams", retention_days=days
        ):
            if not days:
                await delete_tenant(bot.store, mapped)
        return
    if mapped is None and not bot.settings.self_service:
        return
    place = InstallPlace("teams", aad, f"teams-{aad[:8]}", aad_tenant=aad)
    await provision_install(
        bot.store, place, installer=_actor(activity).user_id, mapped_tenant=mapped
    )


async def _card(bot: TeamsBot, activity: Activity, outcome: Outcome | None) -> Json:
    aad = aad_tenant_of(activity)
    tenant = await _tenant(bot, activity)
    if tenant is None or aad is None:
        return render_not_connected(aad)
    switches = await list_channel_switches(bot.store, aad)
    channels = [(s.channel_id, s.channel_id) for s in switches if s.tenant_id == tenant]
    overview = await load_overview(
        bot.store, bot.settings, tenant, surface="teams", team_id=aad, channels=channels
    )
    admin = await is_admin(bot.store, tenant, _actor(activity))
    notice = None if outcome is None else ("✅ " if outcome.changed else "⛔ ") + outcome.message
    return c.render_settings(overview, admin=admin, notice=notice)


async def _apply(
    bot: TeamsBot, changes: SettingsChanges, activity: Activity, verb: str, data: dict[str, Any]
) -> Outcome | None:
    tenant, aad, actor = await _tenant(bot, activity), aad_tenant_of(activity), _actor(activity)
    if tenant is None or aad is None:
        return refused("This organisation is not connected.")
    if verb == c.REFRESH:
        return None
    if not await changes.may_change(tenant, actor):
        return refused(NOT_ADMIN)
    if verb == c.CHANNEL:
        channel, switch = str(data.get("channel_id") or ""), data.get("switch")
        known = {s.channel_id for s in await list_channel_switches(bot.store, aad)}
        if channel not in known or switch not in ("alerts", "follow_ups"):
            return refused("That channel is not one of this organisation's; nothing changed.")
        on = data.get("on") is True
        return await changes.set_channel_switch(tenant, actor, aad, channel, switch, on)
    if verb == c.OWNER:
        target = str(data.get(c.OWNER_INPUT) or "").strip() or None
        return await changes.set_default_owner(tenant, actor, target)
    if verb == c.ADMIN_ADD:
        person = str(data.get(c.ADMIN_INPUT) or "").strip().lower()
        try:
            uuid.UUID(person)
        except ValueError:
            return refused("An admin is named by their Entra object id (a GUID).")
        return await changes.add_admin(tenant, actor, person, "user")
    if verb == c.ADMIN_REMOVE:
        return await changes.remove_admin(tenant, actor, str(data.get("principal") or ""))
    if verb == c.SOURCE_REMOVE:
        return await changes.remove_source(tenant, actor, str(data.get("source_id") or ""))
    if verb == c.SOURCE_SYNC:
        row = await own_source(bot.store, tenant, str(data.get("source_id") or ""))
        if row is None:
            return refused("That source is gone (the card was out of date).")
        await queue_sync(
            bot.jobs, source_id=row.source_id, tenant=tenant, key=f"now-{uuid.uuid4()}"
        )
        await changes.audit(tenant, actor, "source.sync_requested", row.name, None, None)
        return Outcome(True, f"sync of {row.name} queued")
    return refused("That control is not known here; nothing changed.")


async def _add_source(
    bot: TeamsBot,
    form: SourceForm,
    later: dict[tuple[str, str], Outcome],
    activity: Activity,
    data: dict[str, Any],
) -> Outcome:
    tenant, actor = await _tenant(bot, activity), _actor(activity)
    if tenant is None:
        return refused("This organisation is not connected.")
    typed = {f: str(data.get(i) or "") for f, i in c.SOURCE_INPUTS.items()}
    kind = typed.pop("kind") or "git"
    secrets = {k: typed.pop(k) or None for k in ("token", "pat")}
    try:
        draft = SourceDraft.model_validate({"kind": kind, **typed, **secrets})
    except ValueError:
        return refused("Pick git or Confluence.")
    key = f"teams:{activity.id or uuid.uuid4()}"
    work = asyncio.ensure_future(form.submit(tenant, actor, draft, submission_key=key))
    bot.tasks.adopt(work)
    done, _ = await asyncio.wait({work}, timeout=ADD_BUDGET_S)
    if not done:
        work.add_done_callback(lambda w: _keep_outcome(bot, later, (tenant, actor.user_id), w))
        return Outcome(False, "Still testing the source; press Refresh for the outcome.")
    return await _added(bot, tenant, work)


async def _added(bot: TeamsBot, tenant: str, work: asyncio.Future[Outcome]) -> Outcome:
    try:
        outcome = work.result()
    except FieldErrors as exc:
        return refused(
            "Nothing was added: " + "; ".join(f"{k}: {v}" for k, v in exc.errors.items())
        )
    if outcome.source_id is not None:
        await queue_sync(
            bot.jobs, source_id=uuid.UUID(outcome.source_id), tenant=tenant, key="first"
        )
    return outcome


def _keep_outcome(
    bot: TeamsBot,
    later: dict[tuple[str, str], Outcome],
    key: tuple[str, str],
    work: asyncio.Future[Outcome],
) -> None:
    async def keep() -> None:
        later[key] = await _added(bot, key[0], work)

    bot.tasks.adopt(asyncio.ensure_future(keep()))
