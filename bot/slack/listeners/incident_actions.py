"""The incident channel's buttons: "Mute this alert here" and "Stop following this thread".

Both carry only an answer id; the alert or thread it stands for is looked up within the tenant
resolved from the verified payload, and the clicker gets a short private confirmation.
"""

from __future__ import annotations

from typing import Any

from slack_bolt.async_app import AsyncAck, AsyncApp, AsyncRespond

from bot.core.alerts.memory import AlertMemory
from bot.core.alerts.threads import unfollow_thread
from bot.slack.answering import Bot
from bot.slack.blocks import render_not_connected
from bot.slack.blocks.incident import MUTE_ALERT, STOP_FOLLOWING, render_muted, render_unfollowed
from bot.slack.tenancy import origin_of, tenant_of


def register_incident_actions(app: AsyncApp, bot: Bot) -> None:
    """Register before any catch-all action listener (Bolt runs the first that matches)."""
    listener = IncidentActions(bot)
    app.action(MUTE_ALERT)(listener.mute_alert)
    app.action(STOP_FOLLOWING)(listener.stop_following)


class IncidentActions:
    def __init__(self, bot: Bot) -> None:
        self.bot = bot
        self.memory = AlertMemory(bot.store, repeat_window_min=bot.settings.alert_repeat_window_min)

    async def mute_alert(self, ack: AsyncAck, body: dict[str, Any], respond: AsyncRespond) -> None:
        tenant = await self._start(ack, body, respond)
        if tenant is None:
            return
        name = await self.memory.mute(tenant, _value(body), _user(body))
        await self.bot.delivery.respond(respond, render_muted(name))

    async def stop_following(
        self, ack: AsyncAck, body: dict[str, Any], respond: AsyncRespond
    ) -> None:
        tenant = await self._start(ack, body, respond)
        if tenant is None:
            return
        stored = await self.bot.answers.load(tenant, _value(body))
        where = stored.placement if stored else None
        if where and where.channel_id and where.thread_ts:
            await unfollow_thread(
                self.bot.store,
                tenant,
                where.team_id,
                where.channel_id,
                where.thread_ts,
                _user(body),
            )
        await self.bot.delivery.respond(respond, render_unfollowed())

    async def _start(
        self, ack: AsyncAck, body: dict[str, Any], respond: AsyncRespond
    ) -> str | None:
        self.bot.tasks.adopt_current()
        await ack()
        origin = origin_of(body)
        tenant = await tenant_of(self.bot.store, origin)
        if tenant is None:
            card = render_not_connected(team_id=origin.team_id, enterprise_id=origin.enterprise_id)
            await self.bot.delivery.respond(respond, card)
        return tenant


def _value(body: dict[str, Any]) -> str:
    return str((body.get("actions") or [{}])[0].get("value") or "")


def _user(body: dict[str, Any]) -> str:
    return str((body.get("user") or {}).get("id") or "")
