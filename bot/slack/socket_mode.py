"""Socket Mode: Slack over an outbound WebSocket; HTTP still serves /healthz and /metrics."""

from __future__ import annotations

import logging

from aiohttp import web
from slack_bolt.adapter.socket_mode.aiohttp import AsyncSocketModeHandler
from slack_bolt.async_app import AsyncApp

from bot.core.job_worker import JobWorker
from bot.core.tasks import BackgroundTasks
from bot.server import serving, wait_for_stop_signal, working

logger = logging.getLogger(__name__)


async def run_socket_mode(
    app: AsyncApp,
    web_app: web.Application,
    *,
    app_token: str,
    host: str,
    port: int,
    tasks: BackgroundTasks,
    worker: JobWorker,
) -> None:
    handler = AsyncSocketModeHandler(app, app_token)
    async with working(worker, tasks), serving(web_app, host=host, port=port):
        await handler.connect_async()  # type: ignore[no-untyped-call]  # untyped in Bolt
        logger.info("connected to Slack over Socket Mode")
        try:
            await wait_for_stop_signal()
        finally:
            await handler.close_async()  # type: ignore[no-untyped-call]
