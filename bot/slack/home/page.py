"""The App Home page of one reader: who they are to the tenant, the overview drawn for them,
published with ``views.publish`` (at once on ``app_home_opened`` and after each change)."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Any

from slack_bolt.context.async_context import AsyncBoltContext
from slack_sdk.web.async_client import AsyncWebClient

from bot.core.admin.admins import Actor, admin_groups, is_admin
from bot.core.admin.changes import SettingsChanges
from bot.core.admin.lifecycle import is_uninstalled
from bot.core.admin.overview import load_overview
from bot.core.admin.source_form import SourceForm
from bot.core.jobs.queue import JobQueue
from bot.core.tasks import BackgroundTasks
from bot.slack.home.people import SlackPeople
from bot.slack.home.view import render_home, render_not_connected
from bot.slack.tenancy import Origin, origin_of, tenant_of
from rag import Settings, Store

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Reader:
    """A request's tenant (None: not connected) and the workspace it came from."""

    tenant: str | None
    team_id: str
    origin: Origin
    uninstalled: bool = False


@dataclass(frozen=True)
class HomePage:
    store: Store
    settings: Settings
    jobs: JobQueue
    tasks: BackgroundTasks
    people: SlackPeople
    changes: SettingsChanges
    sources: SourceForm

    async def reader(self, body: dict[str, Any], context: AsyncBoltContext | None) -> Reader:
        origin = origin_of(body, context)
        tenant = await tenant_of(self.store, origin)
        team = origin.team_id or origin.enterprise_id or ""
        if tenant is not None and await is_uninstalled(self.store, tenant):
            return Reader(None, team, origin, uninstalled=True)
        return Reader(tenant, team, origin)

    async def actor(self, client: AsyncWebClient, reader: Reader, user: str) -> Actor:
        groups = await admin_groups(self.store, reader.tenant or "", "slack")
        return await self.people.actor(client, reader.team_id, user, groups)

    async def publish(
        self, client: AsyncWebClient, reader: Reader, user: str, notice: str | None = None
    ) -> None:
        started = time.perf_counter()
        if reader.tenant is None:
            view = render_not_connected(reader.team_id, uninstalled=reader.uninstalled)
            await client.views_publish(user_id=user, view=view)
            return
        actor = await self.actor(client, reader, user)
        admin = await is_admin(self.store, reader.tenant, actor)
        channels = await self.people.channels(client, reader.team_id)
        overview = await load_overview(
            self.store,
            self.settings,
            reader.tenant,
            surface="slack",
            team_id=reader.team_id,
            channels=channels,
        )
        groups = await self.people.usergroups(client, reader.team_id) if admin else []
        view = render_home(
            overview, team_id=reader.team_id, admin=admin, notice=notice, usergroups=groups
        )
        await client.views_publish(user_id=user, view=view)
        logger.info(
            "home of tenant %s published (%s, %d blocks) in %.0f ms",
            reader.tenant,
            "admin" if admin else "member",
            len(view.blocks),
            (time.perf_counter() - started) * 1000,
        )
