"""``runbook serve --role web|worker``: what one process of each role builds and runs.

The **web** role verifies, deduplicates, queues and acks (Slack's events and interactions,
Teams' activities, the sources' push webhooks), and answers health and metrics; it opens the
database but never the embedding model, and runs no job. A **worker** claims jobs (answers,
source syncs, owner notes, Graph subscriptions) and serves only the internal port. Both build
the same Slack and Teams apps: the web role for their listeners, a worker for their job handlers
and clients. ``--role all`` is ``bot.supervisor``: one web process and its workers.
"""

from __future__ import annotations

import logging
import os
from contextlib import AsyncExitStack
from dataclasses import dataclass
from typing import Literal

import aiohttp
from slack_bolt.async_app import AsyncApp

from bot.core.jobs.metrics import JobMetrics
from bot.core.jobs.queue import JobQueue
from bot.core.jobs.upkeep import QueueUpkeep, queue_upkeep_running
from bot.core.jobs.wakeups import JobWakeups, wakeups_running
from bot.core.jobs.worker import JobHandlers, JobWorker
from bot.core.metrics import BotMetrics
from bot.core.owners.queue import OwnerMessenger
from bot.core.owners.runbook_owners import Surface
from bot.core.sources.alerts import SourceFailureReports
from bot.core.sources.jobs import SYNC_KIND, SourceSyncJob, source_schedule_running
from bot.core.sources.runs import cipher_or_none
from bot.core.tasks import BackgroundTasks
from bot.core.upkeep import upkeep_running
from bot.cpu_priority import lower_priority, prefer_short_slices
from bot.server import AddRoutes, build_internal_app, build_web_app, run_http, run_internal
from bot.slack.app import SLACK_TIMEOUT_S, build_app
from bot.slack.delivery.clients import web_api_session
from bot.slack.modes import SlackMode
from bot.slack.owner_messages import SlackOwnerMessenger
from bot.slack.routes import slack_routes
from bot.slack.socket_mode import run_socket_mode
from bot.source_hooks import source_hook_routes
from bot.supervisor import worker_name
from bot.teams.app import TeamsApp, build_teams_app
from bot.teams.config import TeamsMode
from bot.teams.graph.subscriptions import graph_schedule_running
from bot.teams.owner_messages import TeamsOwnerMessenger
from bot.teams.routes import teams_routes
from rag import (
    RagMetrics,
    RagService,
    Settings,
    Store,
    open_runtime,
    open_store,
    resolve_database_url,
)

logger = logging.getLogger(__name__)

Role = Literal["web", "worker"]


@dataclass(frozen=True)
class Surfaces:
    """The apps one process built, and the collaborators they share."""

    slack: SlackMode
    teams: TeamsMode
    store: Store
    jobs: JobQueue
    tasks: BackgroundTasks
    metrics: BotMetrics
    handlers: JobHandlers
    app: AsyncApp | None
    teams_app: TeamsApp | None
    routes: tuple[AddRoutes, ...]
    slack_owners: SlackOwnerMessenger | None


async def serve_web(settings: Settings, slack: SlackMode, teams: TeamsMode) -> int:
    """The web role until SIGTERM: intake, acks, webhooks, health and metrics."""
    async with AsyncExitStack() as stack:
        store = await stack.enter_async_context(open_store(settings))
        # Only now: an embedded server this process starts would inherit the short slice.
        prefer_short_slices(settings.web_slice_us)
        session = await stack.enter_async_context(web_api_session(SLACK_TIMEOUT_S))
        jobs = await _queue(stack, store, settings, worker_name=None, acks=True)
        built = _build(settings, slack, teams, store, jobs, session, service=None)
        upkeep = QueueUpkeep(jobs, JobMetrics(built.metrics.registry), prune=False)
        await stack.enter_async_context(queue_upkeep_running(upkeep))
        web_app = build_web_app(
            surfaces=[*built.routes, source_hook_routes(store, jobs, cipher_or_none(settings))]
        )
        internal_app = build_internal_app(
            store=store,
            rag_metrics=RagMetrics(),
            bot_metrics=built.metrics,
            database=jobs.database,
            role="web",
            before_scrape=upkeep.refresh_gauges,
        )
        app = built.app
        if app is not None and slack.kind == "socket" and settings.slack_app_token is not None:
            await run_socket_mode(
                app,
                web_app,
                internal_app,
                app_token=settings.slack_app_token.get_secret_value(),
                settings=settings,
                tasks=built.tasks,
                worker=None,
            )
        else:
            await run_http(web_app, internal_app, settings=settings, tasks=built.tasks, worker=None)
    return 0


async def serve_worker(
    settings: Settings, slack: SlackMode, teams: TeamsMode, *, slot: int | None = None
) -> int:
    """A worker until SIGTERM: jobs, schedules, and health and metrics on the internal port.

    ``slot``: its place under ``bot.supervisor``, which names it (so a restart in the same
    slot puts back at once what the crashed process held) and lowers its priority."""
    if slot is not None:
        # The embedded server up first (the supervisor started it; after an outage this
        # process may): a server it starts at the workers' nice would run every backend at it.
        await resolve_database_url(settings)
        lower_priority(settings.worker_nice)
    name = None if slot is None else worker_name(os.getppid(), slot)
    async with AsyncExitStack() as stack:
        runtime = await stack.enter_async_context(open_runtime(settings))
        session = await stack.enter_async_context(web_api_session(SLACK_TIMEOUT_S))
        jobs = await _queue(stack, runtime.store, settings, worker_name=name)
        if name is not None and (released := await jobs.release_stale()):
            logger.warning("put back %d jobs this slot held when its process died", released)
        built = _build(settings, slack, teams, runtime.store, jobs, session, runtime.service)
        cipher = cipher_or_none(settings)
        built.handlers.register(
            SYNC_KIND,
            SourceSyncJob(
                store=runtime.store,
                embedder=runtime.embedder,
                settings=settings,
                cipher=cipher,
                on_outcome=(
                    None
                    if built.slack_owners is None
                    else SourceFailureReports(runtime.store, built.slack_owners)
                ),
            ),
        )
        worker = JobWorker(
            jobs,
            built.handlers,
            tasks=built.tasks,
            metrics=JobMetrics(built.metrics.registry),
            capped=(SYNC_KIND, settings.source_sync_concurrency),
        )
        internal_app = build_internal_app(
            store=runtime.store,
            rag_metrics=runtime.service.metrics,
            bot_metrics=built.metrics,
            database=jobs.database,
            role="worker",
            before_scrape=worker.upkeep.refresh_gauges,
        )
        await stack.enter_async_context(wakeups_running(JobWakeups(runtime.store, jobs.new_work)))
        await stack.enter_async_context(upkeep_running(runtime.store, _owners(built), settings))
        await stack.enter_async_context(source_schedule_running(runtime.store, jobs, settings))
        if built.teams_app is not None and settings.teams_graph_alerts:
            await stack.enter_async_context(graph_schedule_running(runtime.store, jobs))
        await run_internal(internal_app, settings=settings, tasks=built.tasks, worker=worker)
    return 0


async def _queue(
    stack: AsyncExitStack,
    store: Store,
    settings: Settings,
    *,
    worker_name: str | None,
    acks: bool = False,
) -> JobQueue:
    jobs = await JobQueue.open(store, settings, acks=acks)
    stack.push_async_callback(jobs.close)
    if worker_name is not None:
        jobs.worker_name = worker_name
    return jobs


def _build(
    settings: Settings,
    slack: SlackMode,
    teams: TeamsMode,
    store: Store,
    jobs: JobQueue,
    session: aiohttp.ClientSession,
    service: RagService | None,
) -> Surfaces:
    tasks, metrics, handlers = BackgroundTasks(), BotMetrics(), JobHandlers()
    routes: list[AddRoutes] = []
    app: AsyncApp | None = None
    teams_app: TeamsApp | None = None
    slack_owners: SlackOwnerMessenger | None = None
    if slack.kind is not None:
        app = build_app(
            settings=settings,
            service=service,
            store=store,
            client=None,
            tasks=tasks,
            metrics=metrics,
            jobs=jobs,
            job_handlers=handlers,
            session=session,
        )
        if slack.kind == "http":
            routes.append(slack_routes(app, metrics))
        slack_owners = SlackOwnerMessenger(
            store=store,
            client=app.client,
            installations=app.installation_store,
            api_url=settings.slack_api_url,
        )
    if teams.kind is not None:
        if teams.kind == "local" and service is None:
            logger.warning(
                "Teams local mode (TEAMS_ALLOW_UNAUTHENTICATED=true): activities without a "
                "token are accepted and replies are sent unsigned; never use it in production"
            )
        teams_app = build_teams_app(
            settings=settings,
            mode=teams,
            service=service,
            store=store,
            tasks=tasks,
            metrics=metrics,
            jobs=jobs,
            job_handlers=handlers,
        )
        routes.append(teams_routes(teams_app))
    return Surfaces(
        slack=slack,
        teams=teams,
        store=store,
        jobs=jobs,
        tasks=tasks,
        metrics=metrics,
        handlers=handlers,
        app=app,
        teams_app=teams_app,
        routes=tuple(routes),
        slack_owners=slack_owners,
    )


def _owners(built: Surfaces) -> dict[Surface, OwnerMessenger]:
    owners: dict[Surface, OwnerMessenger] = {}
    if built.slack_owners is not None:
        owners["slack"] = built.slack_owners
    if built.teams_app is not None:
        owners["teams"] = TeamsOwnerMessenger(built.teams_app.bot)
    return owners
