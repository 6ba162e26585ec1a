"""The real Slack app served over HTTP on 127.0.0.1, for end-to-end tests against a fake Slack."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

from slack_sdk.web.async_client import AsyncWebClient

from bot.core.metrics import BotMetrics
from bot.core.tasks import BackgroundTasks
from bot.server import build_internal_app, build_web_app, serving
from bot.slack.app import build_app
from bot.slack.routes import EVENTS_PATH, slack_routes
from rag import RagService, Settings, Store


@dataclass(frozen=True)
class ServedApp:
    url: str
    events_url: str
    internal_url: str  # /healthz and /metrics
    tasks: BackgroundTasks
    metrics: BotMetrics


@asynccontextmanager
async def served_app(
    *, settings: Settings, service: RagService, store: Store, client: AsyncWebClient
) -> AsyncIterator[ServedApp]:
    """Build the app exactly as ``runbook serve`` does and serve it on a free port.

    On exit every background answer must have finished: a test never leaves work behind.
    """
    tasks, metrics = BackgroundTasks(), BotMetrics()
    app = build_app(
        settings=settings,
        service=service,
        store=store,
        client=client,
        tasks=tasks,
        metrics=metrics,
    )
    web_app = build_web_app(surfaces=[slack_routes(app, metrics)])
    internal_app = build_internal_app(store=store, rag_metrics=service.metrics, bot_metrics=metrics)
    async with (
        serving(web_app, host="127.0.0.1", port=0) as port,
        serving(internal_app, host="127.0.0.1", port=0) as internal_port,
    ):
        url = f"http://127.0.0.1:{port}"
        internal_url = f"http://127.0.0.1:{internal_port}"
        yield ServedApp(url, url + EVENTS_PATH, internal_url, tasks, metrics)
        assert await tasks.drain(10) == 0
