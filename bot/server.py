"""The HTTP side shared by every surface: ``/healthz``, ``/metrics``, surface routes, graceful runs.

Every process also runs a job worker (``working``). Shutdown order: stop taking requests, stop
claiming jobs, then drain the answers already in flight (up to a bound); a job still running
at the end of the drain goes back to the queue for another replica (or this one after its
restart), so a deploy never leaves a user with a "searching" mark and no answer.
"""

from __future__ import annotations

import asyncio
import logging
import signal
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager

from aiohttp import web

from bot.core.job_worker import JobWorker
from bot.core.metrics import BotMetrics, render_metrics
from bot.core.tasks import BackgroundTasks
from rag import RagMetrics, Store, StoreError

logger = logging.getLogger(__name__)

DRAIN_TIMEOUT_S = 25.0  # inside the usual 30 s between SIGTERM and SIGKILL


# A surface adds its own routes (Slack's events and OAuth pages, Teams' /api/messages).
AddRoutes = Callable[[web.Application], None]


def build_web_app(
    *,
    store: Store,
    rag_metrics: RagMetrics,
    bot_metrics: BotMetrics,
    surfaces: Sequence[AddRoutes] = (),
) -> web.Application:
    """Health and metrics always, then each configured surface's routes."""
    web_app = web.Application()

    async def healthz(request: web.Request) -> web.Response:
        try:
            await store.check()
        except StoreError as exc:
            return web.json_response({"status": "unavailable", "database": exc.code}, status=503)
        return web.json_response({"status": "ok"})

    async def metrics(request: web.Request) -> web.Response:
        body = render_metrics(rag_metrics, bot_metrics)
        return web.Response(body=body, content_type="text/plain", charset="utf-8")

    web_app.router.add_get("/healthz", healthz)
    web_app.router.add_get("/metrics", metrics)
    for add_routes in surfaces:
        add_routes(web_app)
    return web_app


@asynccontextmanager
async def serving(web_app: web.Application, *, host: str, port: int) -> AsyncIterator[int]:
    """Serve ``web_app`` until the block exits; yields the bound port (``port=0`` picks one)."""
    runner = web.AppRunner(web_app, access_log=None, shutdown_timeout=5.0)
    await runner.setup()
    try:
        site = web.TCPSite(runner, host, port)
        await site.start()
        yield int(runner.addresses[0][1])
    finally:
        await runner.cleanup()


@asynccontextmanager
async def working(
    worker: JobWorker, tasks: BackgroundTasks, *, drain_s: float = DRAIN_TIMEOUT_S
) -> AsyncIterator[None]:
    """Run ``worker`` for the block; then stop claiming and drain what is in flight.

    Jobs the drain has to cancel are handed back to the queue by the worker, not dropped.
    """
    claiming = asyncio.create_task(worker.run())
    try:
        yield
    finally:
        worker.stop()
        await claiming
        if handed_back := await tasks.drain(drain_s):
            logger.warning("%d answers in flight were handed back to the queue", handed_back)


async def run_http(
    web_app: web.Application, *, host: str, port: int, tasks: BackgroundTasks, worker: JobWorker
) -> None:
    async with working(worker, tasks), serving(web_app, host=host, port=port) as bound:
        logger.info("listening on http://%s:%d", host, bound)
        await wait_for_stop_signal()


async def wait_for_stop_signal() -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    try:
        await stop.wait()
    finally:
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.remove_signal_handler(sig)
    logger.info("stopping: draining answers in flight")
