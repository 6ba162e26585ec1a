"""Socket Mode: Slack over an outbound WebSocket; the internal port still serves /healthz and
/metrics (and the public one nothing but what surfaces add)."""

from __future__ import annotations

import logging

from aiohttp import web
from slack_bolt.adapter.socket_mode.aiohttp import AsyncSocketModeHandler
from slack_bolt.async_app import AsyncApp

from bot.core.jobs.worker import JobWorker
from bot.core.tasks import BackgroundTasks
from bot.server import serving_both, wait_for_stop_signal, working
from rag import Settings

logger = logging.getLogger(__name__)


async def run_socket_mode(
    app: AsyncApp,
    web_app: web.Application,
    internal_app: web.Application,
    *,
    app_token: str,
    settings: Settings,
    tasks: BackgroundTasks,
    worker: JobWorker | None,
) -> None:
    handler = AsyncSocketModeHandler(app, app_token)
    async with (
        working(worker, tasks, drain_s=settings.drain_timeout_s),
        serving_both(web_app, internal_app, settings),
    ):
        await handler.connect_async()  # type: ignore[no-untyped-call]  # untyped in Bolt
        logger.info("connected to Slack over Socket Mode")
        try:
            await wait_for_stop_signal()
        finally:
            await handler.close_async()  # type: ignore[no-untyped-call]
