"""``register_home``: App Home's event, its controls and its modal, on one ``HomePage``."""

from __future__ import annotations

from typing import Any

from slack_bolt.async_app import AsyncApp
from slack_bolt.context.async_context import AsyncBoltContext
from slack_sdk.web.async_client import AsyncWebClient

from bot.core.admin.changes import SettingsChanges
from bot.core.admin.source_form import SourceForm
from bot.core.jobs.queue import JobQueue
from bot.core.sources.runs import cipher_or_none
from bot.core.tasks import BackgroundTasks
from bot.slack.home.actions import register_home_actions
from bot.slack.home.page import HomePage
from bot.slack.home.people import SlackPeople
from bot.slack.home.submissions import register_home_submissions
from rag import Settings, SourceAccess, Store


def build_home_page(
    *, store: Store, settings: Settings, jobs: JobQueue, tasks: BackgroundTasks
) -> HomePage:
    return HomePage(
        store=store,
        settings=settings,
        jobs=jobs,
        tasks=tasks,
        people=SlackPeople(),
        changes=SettingsChanges(store),
        sources=SourceForm(
            store, cipher=cipher_or_none(settings), access=SourceAccess.from_settings(settings)
        ),
    )


def register_home(app: AsyncApp, page: HomePage) -> None:
    async def on_home_opened(
        event: dict[str, Any],
        body: dict[str, Any],
        client: AsyncWebClient,
        context: AsyncBoltContext,
    ) -> None:
        if event.get("tab", "home") != "home":
            return
        user = event.get("user")
        if isinstance(user, str) and user:
            await page.publish(client, await page.reader(body, context), user)

    app.event("app_home_opened")(on_home_opened)
    register_home_actions(app, page)
    register_home_submissions(app, page)
