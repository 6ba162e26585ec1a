"""The HTTP side: Slack's endpoints, ``/healthz`` and ``/metrics`` on aiohttp, and graceful runs.

Shutdown order: stop taking requests, then drain the answers already in flight (up to a bound),
so a deploy never leaves a user with a "searching" mark and no answer.
"""

from __future__ import annotations

import asyncio
import logging
import signal
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from aiohttp import web
from slack_bolt.adapter.aiohttp import to_aiohttp_response, to_bolt_request
from slack_bolt.adapter.socket_mode.aiohttp import AsyncSocketModeHandler
from slack_bolt.async_app import AsyncApp

from bot.metrics import BotMetrics, render_metrics
from bot.tasks import BackgroundTasks
from rag import RagMetrics, Store, StoreError

logger = logging.getLogger(__name__)

EVENTS_PATH = "/slack/events"
DRAIN_TIMEOUT_S = 25.0  # inside the usual 30 s between SIGTERM and SIGKILL


def build_web_app(
    app: AsyncApp | None, *, store: Store, rag_metrics: RagMetrics, bot_metrics: BotMetrics
) -> web.Application:
    """Slack's routes when ``app`` is given (HTTP mode); health and metrics always."""
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
    if app is not None:
        _add_slack_routes(web_app, app, bot_metrics)
    return web_app


def _add_slack_routes(web_app: web.Application, app: AsyncApp, metrics: BotMetrics) -> None:
    async def events(request: web.Request) -> web.Response:
        # The raw body goes to Bolt untouched: its signature check hashes exactly these bytes.
        # Bolt parses the body before it checks the signature and lets a parse error escape;
        # an unparseable request is the sender's fault (400), never our 500.
        try:
            response = await app.async_dispatch(await to_bolt_request(request))
        except (ValueError, TypeError, KeyError, AttributeError) as exc:
            logger.info("unparseable Slack request refused: %s", type(exc).__name__)
            return web.json_response({"error": "unparseable request"}, status=400)
        if response.status == 401:
            metrics.signature_rejections.inc()
        return await to_aiohttp_response(response)

    web_app.router.add_post(EVENTS_PATH, events)
    flow = app.oauth_flow
    if flow is None:
        return

    async def install(request: web.Request) -> web.Response:
        return await to_aiohttp_response(
            await flow.handle_installation(await to_bolt_request(request))
        )

    async def oauth_redirect(request: web.Request) -> web.Response:
        return await to_aiohttp_response(await flow.handle_callback(await to_bolt_request(request)))

    web_app.router.add_get(flow.install_path, install)
    web_app.router.add_get(flow.redirect_uri_path, oauth_redirect)


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


async def run_http(
    web_app: web.Application, *, host: str, port: int, tasks: BackgroundTasks
) -> None:
    async with serving(web_app, host=host, port=port) as bound:
        logger.info("listening on http://%s:%d%s", host, bound, EVENTS_PATH)
        await wait_for_stop_signal()
    await tasks.drain(DRAIN_TIMEOUT_S)


async def run_socket_mode(
    app: AsyncApp,
    web_app: web.Application,
    *,
    app_token: str,
    host: str,
    port: int,
    tasks: BackgroundTasks,
) -> None:
    """Socket Mode for Slack; HTTP still serves /healthz and /metrics for the orchestrator."""
    handler = AsyncSocketModeHandler(app, app_token)
    async with serving(web_app, host=host, port=port):
        await handler.connect_async()  # type: ignore[no-untyped-call]  # untyped in Bolt
        logger.info("connected to Slack over Socket Mode")
        try:
            await wait_for_stop_signal()
        finally:
            await handler.close_async()  # type: ignore[no-untyped-call]
    await tasks.drain(DRAIN_TIMEOUT_S)


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
