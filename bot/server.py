"""The HTTP side shared by every surface: the public app (surface routes only), the internal app
(``/healthz``, ``/metrics``) on its own port, and graceful runs.

Health and metrics are not on the public listener: the database check is a cheap way to load the
database from the internet, and metrics describe traffic. The internal port is for kubelet probes
and Prometheus; never route it from an ingress.

A web process takes requests and queues them; a worker process runs jobs and serves only the
internal port (``run_internal``); ``bot.supervisor`` runs one web process and its workers.
Shutdown order: stop taking requests, stop claiming jobs, then drain the answers already in
flight (up to ``RUNBOOK_DRAIN_TIMEOUT_S``); a job still running at the end of the drain goes
back to the queue for another replica (or this one after its restart), so a deploy never
leaves a user with a "searching" mark and no answer.
"""

from __future__ import annotations

import asyncio
import logging
import signal
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import AsyncExitStack, asynccontextmanager

from aiohttp import web

from bot.core.jobs.database_watch import DatabaseWatch
from bot.core.jobs.worker import JobWorker
from bot.core.metrics import BotMetrics, render_metrics
from bot.core.tasks import BackgroundTasks
from rag import RagMetrics, Settings, Store, StoreError

logger = logging.getLogger(__name__)

# Probes may come every second from several kubelets and scrapers: one database check per second.
HEALTH_TTL_S = 1.0


# A surface adds its own routes (Slack's events and OAuth pages, Teams' /api/messages).
AddRoutes = Callable[[web.Application], None]


def build_web_app(*, surfaces: Sequence[AddRoutes] = ()) -> web.Application:
    """The public app: each configured surface's routes and nothing else."""
    web_app = web.Application()
    for add_routes in surfaces:
        add_routes(web_app)
    return web_app


def build_internal_app(
    *,
    store: Store,
    rag_metrics: RagMetrics,
    bot_metrics: BotMetrics,
    database: DatabaseWatch | None = None,
    role: str | None = None,
    before_scrape: Callable[[], Awaitable[None]] | None = None,
) -> web.Application:
    """Health (database checked at most once per ``HEALTH_TTL_S``; through ``database`` when
    given, which answers 503 at once during an outage) and Prometheus metrics. ``role``: the
    process's (``web``, ``worker``), named in the health body; ``before_scrape``: refreshes
    gauges read from the database (the queue's depth) when metrics are asked for."""
    internal = web.Application()
    health = CachedHealth(store, database=database)

    async def healthz(request: web.Request) -> web.Response:
        status, body = await health.check()
        return web.json_response(body if role is None else {**body, "role": role}, status=status)

    async def metrics(request: web.Request) -> web.Response:
        if before_scrape is not None:
            await before_scrape()
        body = render_metrics(rag_metrics, bot_metrics)
        return web.Response(body=body, content_type="text/plain", charset="utf-8")

    internal.router.add_get("/healthz", healthz)
    internal.router.add_get("/metrics", metrics)
    return internal


class CachedHealth:
    """The database check's last result, reused for a second; one check at a time."""

    def __init__(
        self, store: Store, ttl_s: float = HEALTH_TTL_S, *, database: DatabaseWatch | None = None
    ) -> None:
        self._store = store
        self._database = database
        self._ttl_s = ttl_s
        self._lock = asyncio.Lock()
        self._checked_at = -float("inf")
        self._result: tuple[int, dict[str, str]] = (503, {"status": "unknown"})

    async def check(self) -> tuple[int, dict[str, str]]:
        if self._database is not None and self._database.down:
            # A known outage is news at once: the cache would say 200 for up to a second.
            return 503, {"status": "unavailable", "database": StoreError.code}
        async with self._lock:
            if time.monotonic() - self._checked_at >= self._ttl_s:
                self._result = await self._check_database()
                self._checked_at = time.monotonic()
            return self._result

    async def _check_database(self) -> tuple[int, dict[str, str]]:
        if self._database is not None:
            if not await self._database.check():
                return 503, {"status": "unavailable", "database": StoreError.code}
            return 200, {"status": "ok"}
        try:
            await self._store.check()
        except StoreError as exc:
            return 503, {"status": "unavailable", "database": exc.code}
        return 200, {"status": "ok"}


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
async def serving_both(
    web_app: web.Application, internal_app: web.Application, settings: Settings
) -> AsyncIterator[None]:
    """The public app on RUNBOOK_HOST:RUNBOOK_PORT, the internal one on its own host and port."""
    async with AsyncExitStack() as stack:
        public = await stack.enter_async_context(
            serving(web_app, host=settings.host, port=settings.port)
        )
        internal = await stack.enter_async_context(
            serving(internal_app, host=settings.internal_host, port=settings.internal_port)
        )
        logger.info("listening on http://%s:%d", settings.host, public)
        logger.info(
            "health and metrics on http://%s:%d (internal)", settings.internal_host, internal
        )
        yield


@asynccontextmanager
async def working(
    worker: JobWorker | None, tasks: BackgroundTasks, *, drain_s: float
) -> AsyncIterator[None]:
    """Run ``worker`` for the block; then stop claiming and drain what is in flight (without
    a worker, as in the web role, what listeners still do after their acks).

    Jobs the drain has to cancel are handed back to the queue by the worker, not dropped.
    """
    claiming = None if worker is None else asyncio.create_task(worker.run())
    try:
        yield
    finally:
        if worker is not None and claiming is not None:
            worker.stop()
            await claiming
        if handed_back := await tasks.drain(drain_s):
            logger.warning("%d answers in flight were handed back to the queue", handed_back)


async def run_http(
    web_app: web.Application,
    internal_app: web.Application,
    *,
    settings: Settings,
    tasks: BackgroundTasks,
    worker: JobWorker | None,
) -> None:
    async with (
        working(worker, tasks, drain_s=settings.drain_timeout_s),
        serving_both(web_app, internal_app, settings),
    ):
        await wait_for_stop_signal()


async def run_internal(
    internal_app: web.Application,
    *,
    settings: Settings,
    tasks: BackgroundTasks,
    worker: JobWorker,
) -> None:
    """A worker process: its jobs, and only the internal port (health and metrics)."""
    async with working(worker, tasks, drain_s=settings.drain_timeout_s):
        async with serving(
            internal_app, host=settings.internal_host, port=settings.internal_port
        ) as internal:
            logger.info(
                "worker: health and metrics on http://%s:%d", settings.internal_host, internal
            )
            await wait_for_stop_signal()


async def wait_for_stop_signal() -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    try:
        await stop.wait()
    finally:
        loop.remove_signal_handler(signal.SIGINT)  # a second Ctrl-C stops at once
        # A second SIGTERM (a process group's and then its supervisor's, or an impatient
        # orchestrator) must not cut the drain short; SIGKILL is the way to do that.
        loop.add_signal_handler(signal.SIGTERM, _already_stopping)
    logger.info("stopping: draining answers in flight")


def _already_stopping() -> None:
    logger.info("already stopping: draining answers in flight")
