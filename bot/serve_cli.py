"""``runbook serve``, ``runbook start`` and ``runbook secrets``: the chat surfaces on one
aiohttp server with their workers, and the keys for tokens at rest.

Imported only by those commands (``bot.cli`` names them lazily): the Slack and Teams SDKs, the
aiohttp server and the job queue are most of a command's start-up time.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import sys

import aiohttp

from bot.core.jobs.metrics import JobMetrics
from bot.core.jobs.queue import JobQueue
from bot.core.jobs.worker import JobHandlers, JobWorker
from bot.core.metrics import BotMetrics
from bot.core.owners.queue import OwnerMessenger
from bot.core.owners.runbook_owners import Surface
from bot.core.sources.alerts import SourceFailureReports
from bot.core.sources.jobs import SYNC_KIND, SourceSyncJob, source_schedule_running
from bot.core.sources.runs import cipher_or_none
from bot.core.tasks import BackgroundTasks
from bot.core.token_cipher import TokenCipher, generate_key
from bot.core.upkeep import upkeep_running
from bot.server import AddRoutes, build_internal_app, build_web_app, run_http
from bot.slack.app import SLACK_TIMEOUT_S, build_app
from bot.slack.delivery.clients import web_api_session
from bot.slack.modes import SlackMode, slack_mode
from bot.slack.owner_messages import SlackOwnerMessenger
from bot.slack.reseal import reseal_tokens
from bot.slack.routes import slack_routes
from bot.slack.socket_mode import run_socket_mode
from bot.source_hooks import source_hook_routes
from bot.teams.app import build_teams_app
from bot.teams.config import TeamsMode, is_loopback, teams_mode
from bot.teams.graph.config import graph_alerts_problem
from bot.teams.graph.subscriptions import graph_schedule_running
from bot.teams.owner_messages import TeamsOwnerMessenger
from bot.teams.routes import teams_routes
from rag import Runtime, Settings, Store, open_runtime, open_store, run_demo

logger = logging.getLogger(__name__)

EXIT_USAGE = 2


async def serve_command(args: argparse.Namespace, settings: Settings) -> int:
    settings = _listen_on(args, settings)
    slack, teams = slack_mode(settings), teams_mode(settings)
    if slack.kind is None and teams.kind is None:
        print(f"runbook serve: {slack.explain()}; {teams.explain()}", file=sys.stderr)
        return EXIT_USAGE
    problem = _surface_problem(settings, slack, teams)
    if problem:
        print(f"runbook serve: {problem}", file=sys.stderr)
        return EXIT_USAGE
    return await _serve(settings, slack, teams)


async def start_command(args: argparse.Namespace, settings: Settings) -> int:
    settings = _listen_on(args, settings)
    slack, teams = slack_mode(settings), teams_mode(settings)
    problem = _surface_problem(settings, slack, teams)
    if problem:
        # Half a setup is a mistake to fix, not a wish for the demo.
        print(
            f"runbook start: {problem}; set the rest, or unset every SLACK_* and TEAMS_* "
            "variable to run the local demo",
            file=sys.stderr,
        )
        return EXIT_USAGE
    if slack.kind is not None or teams.kind is not None:
        return await _serve(settings, slack, teams)
    print(f"runbook start: {slack.explain()}; running the local demo instead", file=sys.stderr)
    return await run_demo(settings, args.corpus)


def _surface_problem(settings: Settings, slack: SlackMode, teams: TeamsMode) -> str | None:
    """Why serving would be wrong: a half-configured surface (silently skipping it would look
    like a bot that ignores its users), or the local Teams mode on a reachable address or beside
    a production registration."""
    if slack.partly_configured:
        return slack.explain()
    if teams.partly_configured or teams.conflicting:
        return teams.explain()
    if teams.kind == "local" and not is_loopback(settings.host):
        return (
            f"TEAMS_ALLOW_UNAUTHENTICATED=true accepts activities without a token, so it only "
            f"listens on a loopback address (127.0.0.1, ::1), not {settings.host!r}"
        )
    return graph_alerts_problem(settings, teams)


async def _serve(settings: Settings, slack: SlackMode, teams: TeamsMode) -> int:
    async with open_runtime(settings) as runtime, web_api_session(SLACK_TIMEOUT_S) as session:
        jobs = await JobQueue.open(runtime.store, settings)
        try:
            await _serve_with(settings, slack, teams, runtime, jobs, session)
        finally:
            await jobs.close()
    return 0


async def _serve_with(
    settings: Settings,
    slack: SlackMode,
    teams: TeamsMode,
    runtime: Runtime,
    jobs: JobQueue,
    session: aiohttp.ClientSession,
) -> None:
    tasks, metrics, handlers = BackgroundTasks(), BotMetrics(), JobHandlers()
    surfaces: list[AddRoutes] = []
    app, teams_app = None, None
    if slack.kind is not None:
        app = build_app(
            settings=settings,
            service=runtime.service,
            store=runtime.store,
            client=None,
            tasks=tasks,
            metrics=metrics,
            jobs=jobs,
            job_handlers=handlers,
            session=session,
        )
        if slack.kind == "http":
            surfaces.append(slack_routes(app, metrics))
    if teams.kind is not None:
        if teams.kind == "local":
            logger.warning(
                "Teams local mode (TEAMS_ALLOW_UNAUTHENTICATED=true): activities without a "
                "token are accepted and replies are sent unsigned; never use it in production"
            )
        teams_app = build_teams_app(
            settings=settings,
            mode=teams,
            service=runtime.service,
            store=runtime.store,
            tasks=tasks,
            metrics=metrics,
            jobs=jobs,
            job_handlers=handlers,
        )
        surfaces.append(teams_routes(teams_app))
    owners: dict[Surface, OwnerMessenger] = {}
    slack_owners: SlackOwnerMessenger | None = None
    if app is not None:
        slack_owners = SlackOwnerMessenger(
            store=runtime.store,
            client=app.client,
            installations=app.installation_store,
            api_url=settings.slack_api_url,
        )
        owners["slack"] = slack_owners
    if teams_app is not None:
        owners["teams"] = TeamsOwnerMessenger(teams_app.bot)
    cipher = cipher_or_none(settings)
    handlers.register(
        SYNC_KIND,
        SourceSyncJob(
            store=runtime.store,
            embedder=runtime.embedder,
            settings=settings,
            cipher=cipher,
            on_outcome=(
                None if slack_owners is None else SourceFailureReports(runtime.store, slack_owners)
            ),
        ),
    )
    surfaces.append(source_hook_routes(runtime.store, jobs, cipher))
    worker = JobWorker(jobs, handlers, tasks=tasks, metrics=JobMetrics(metrics.registry))
    web_app = build_web_app(surfaces=surfaces)
    internal_app = build_internal_app(
        store=runtime.store,
        rag_metrics=runtime.service.metrics,
        bot_metrics=metrics,
        database=jobs.database,
    )
    async with (
        upkeep_running(runtime.store, owners, settings),
        source_schedule_running(runtime.store, jobs, settings),
        _graph_schedule(runtime.store, jobs, settings, teams_app is not None),
    ):
        if app is not None and slack.kind == "socket" and settings.slack_app_token is not None:
            await run_socket_mode(
                app,
                web_app,
                internal_app,
                app_token=settings.slack_app_token.get_secret_value(),
                settings=settings,
                tasks=tasks,
                worker=worker,
            )
        else:
            await run_http(web_app, internal_app, settings=settings, tasks=tasks, worker=worker)


def _graph_schedule(
    store: Store, jobs: JobQueue, settings: Settings, serves_teams: bool
) -> contextlib.AbstractAsyncContextManager[None]:
    """The Graph subscription schedule where this replica serves Teams' Graph alert posts."""
    if serves_teams and settings.teams_graph_alerts:
        return graph_schedule_running(store, jobs)
    return contextlib.nullcontext()


async def secrets_command(args: argparse.Namespace, settings: Settings) -> int:
    if args.action == "generate-key":
        print(generate_key())
        return 0
    cipher = TokenCipher.from_setting(settings.encryption_keys)
    async with open_store(settings) as store:
        count = await reseal_tokens(store, cipher)
    print(f"re-encrypted {count} stored Slack token row(s) with the first key")
    return 0


def _listen_on(args: argparse.Namespace, settings: Settings) -> Settings:
    """Settings for serving: the command line's address, one ONNX thread unless configured."""
    overrides = {"host": args.host, "port": args.port}
    serving = settings.serving()
    return serving.model_copy(update={k: v for k, v in overrides.items() if v is not None})
