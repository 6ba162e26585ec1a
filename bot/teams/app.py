"""``build_teams_app``: the Agents SDK app and adapter wired to the core, security defaults on.

Answer work is queued (``jobs``) before each request is answered; its handlers go into
``job_handlers`` for the job worker of ``runbook serve``.

Production: JWT validation with issuer checks (``bot.teams.auth``), the outbound service-URL
validator on (only Microsoft's https connector hosts), MSAL tokens for outbound calls. Local
mode: no token required or sent, loopback service URLs allowed.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from microsoft_agents.authentication.msal import MsalConnectionManager
from microsoft_agents.hosting.aiohttp import CloudAdapter
from microsoft_agents.hosting.core import (
    AgentApplication,
    AgentAuthConfiguration,
    AnonymousTokenProvider,
    ApplicationOptions,
    ConnectionManager,
    MemoryStorage,
    OutboundHostValidator,
    TurnState,
)
from microsoft_agents.hosting.core.authorization import Connections

from bot.core.answers.store import AnswerStore
from bot.core.dedupe import EventDeduper
from bot.core.jobs.queue import JobQueue
from bot.core.jobs.worker import JobHandlers
from bot.core.metrics import BotMetrics
from bot.core.tasks import BackgroundTasks
from bot.server import AddRoutes
from bot.teams.auth import RequestAuthorizer, SigningKeys, auth_configuration
from bot.teams.bot import TeamsBot
from bot.teams.card_actions import register_card_actions
from bot.teams.config import TeamsMode
from bot.teams.delivery import Delivery
from bot.teams.errors import TurnErrorHandler
from bot.teams.graph.alerts import register_graph_alerts
from bot.teams.incident.answers import register_incident_jobs
from bot.teams.jobs.answering import register_answer_jobs
from bot.teams.message_action import register_message_action
from bot.teams.messages import register_messages
from bot.teams.metrics import TeamsMetrics
from bot.teams.settings.handlers import register_settings
from rag import ConfigurationError, RagService, Settings, Store


@dataclass(frozen=True)
class TeamsApp:
    agent: AgentApplication[TurnState]
    adapter: CloudAdapter
    authorizer: RequestAuthorizer
    bot: TeamsBot
    # Routes beside /api/messages: the Graph notification hook when TEAMS_GRAPH_ALERTS is on.
    hooks: tuple[AddRoutes, ...] = ()


def build_teams_app(
    *,
    settings: Settings,
    mode: TeamsMode,
    service: RagService | None,
    store: Store,
    tasks: BackgroundTasks,
    metrics: BotMetrics,
    jobs: JobQueue,
    job_handlers: JobHandlers,
) -> TeamsApp:
    if mode.kind is None or not settings.teams_app_id:
        raise ConfigurationError(mode.explain())
    local = mode.kind == "local"
    configuration = auth_configuration(settings, local=local)
    connections = _connections(configuration, local=local)
    adapter = CloudAdapter(
        connection_manager=connections,
        host_validator=OutboundHostValidator(enabled=not local),
    )
    options = ApplicationOptions(
        storage=MemoryStorage(),  # nothing is kept in turn state; the SDK requires a store
        bot_app_id=settings.teams_app_id,
        start_typing_timer=False,  # typing activities would count against Teams' rate limits
    )
    agent = AgentApplication[TurnState](options, connection_manager=connections)
    teams_metrics = TeamsMetrics(metrics.registry)
    bot = TeamsBot(
        settings=settings,
        service=service,
        store=store,
        answers=AnswerStore(store),
        metrics=metrics,
        tasks=tasks,
        answer_slots=asyncio.Semaphore(settings.max_concurrent_answers),
        adapter=adapter,
        app_id=settings.teams_app_id,
        local=local,
        delivery=Delivery(teams_metrics),
        intake=EventDeduper(store, queue=jobs),
        jobs=jobs,
        job_handlers=job_handlers,
        teams_metrics=teams_metrics,
    )
    register_answer_jobs(bot)
    register_incident_jobs(bot)
    register_message_action(agent, bot)
    register_settings(agent, bot)  # self-service: installs and the settings card
    register_card_actions(agent, bot)
    register_messages(agent, bot)
    hooks = (register_graph_alerts(bot),) if settings.teams_graph_alerts else ()
    on_error = TurnErrorHandler(teams_metrics).handle
    agent.error(on_error)
    adapter.on_turn_error = on_error
    keys = SigningKeys(
        override_url=settings.teams_jwks_url,
        ttl_s=settings.teams_keys_ttl_s,
        grace_s=settings.teams_keys_grace_s,
    )
    authorizer = RequestAuthorizer(configuration, keys)
    return TeamsApp(agent=agent, adapter=adapter, authorizer=authorizer, bot=bot, hooks=hooks)


def _connections(configuration: AgentAuthConfiguration, *, local: bool) -> Connections:
    # The SDK looks the bot's own connection up under this exact name.
    named = {"SERVICE_CONNECTION": configuration}
    if local:
        return ConnectionManager(
            provider_factory=lambda _: AnonymousTokenProvider(), connections_configurations=named
        )
    return MsalConnectionManager(connections_configurations=named)
