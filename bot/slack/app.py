"""``build_app``: the Bolt ``AsyncApp`` wired to its collaborators, one listener module per entry.

Single-workspace (a bot token) or multi-workspace OAuth (client id and secret) with installs
and install states in our Postgres. Signature verification stays on; dedupe runs before any
token lookup; work is queued before the ack and done by job handlers registered here on
``job_handlers`` (run by the ``JobWorker`` of ``runbook serve``); every listener failure ends
in a visible card.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

import aiohttp
from pydantic import SecretStr
from slack_bolt.async_app import AsyncApp
from slack_bolt.authorization.async_authorize import AsyncInstallationStoreAuthorize
from slack_bolt.oauth.async_oauth_settings import AsyncOAuthSettings
from slack_bolt.response import BoltResponse
from slack_sdk.web.async_client import AsyncWebClient

from bot.core.answers.store import AnswerStore
from bot.core.dedupe import EventDeduper
from bot.core.jobs.queue import JobQueue
from bot.core.jobs.worker import JobHandlers
from bot.core.metrics import BotMetrics
from bot.core.tasks import BackgroundTasks
from bot.core.token_cipher import TokenCipher
from bot.slack.answering import Bot
from bot.slack.delivery.clients import SlackClients
from bot.slack.delivery.posts import Delivery
from bot.slack.delivery.retries import install_retry_handlers
from bot.slack.failures import ErrorReporter
from bot.slack.home.install import install_callbacks, register_install_lifecycle
from bot.slack.home.listeners import build_home_page, register_home
from bot.slack.intake import build_intake_middleware
from bot.slack.listeners.actions import register_actions
from bot.slack.listeners.commands import register_commands
from bot.slack.listeners.draft_offers import register_draft_offers
from bot.slack.listeners.drafts import register_drafts
from bot.slack.listeners.feedback_form import register_feedback_form
from bot.slack.listeners.incident_actions import register_incident_actions
from bot.slack.listeners.mentions import register_mentions
from bot.slack.listeners.shortcuts import register_shortcuts
from bot.slack.message_events import event_job, register_message_events
from bot.slack.oauth_stores import PostgresInstallationStore, PostgresOAuthStateStore
from rag import RagService, Settings, Store

logger = logging.getLogger(__name__)

# Kept in step with manifest.yml: an install asks for exactly these.
BOT_SCOPES = (
    "app_mentions:read",
    "chat:write",
    "commands",
    "reactions:write",
    "channels:history",
    "groups:history",
    "usergroups:read",
    "im:history",
    "users:read",  # App Home and drafts: is the person a workspace admin or owner?
    "channels:read",  # App Home: the channels the bot is in; drafts: can the asker see it
    "groups:read",
    "files:write",  # drafts: the Markdown as a file when no source can take it
)
INSTALL_PATH = "/slack/install"
REDIRECT_PATH = "/slack/oauth_redirect"
SLACK_TIMEOUT_S = 10
_NOT_INSTALLED = (
    "runbook-bot is not installed in this workspace yet. "
    "Ask a Slack admin to install it, then try again."
)


def build_app(
    *,
    settings: Settings,
    service: RagService | None,
    store: Store,
    client: AsyncWebClient | None,
    tasks: BackgroundTasks,
    metrics: BotMetrics,
    jobs: JobQueue,
    job_handlers: JobHandlers,
    session: aiohttp.ClientSession | None = None,
) -> AsyncApp:
    """``session``: the connection pool the app's own client calls Slack through (see
    ``web_api_session``); without one, each call connects anew."""
    _withhold_bodies_from_bolt_logs()
    _format_request_logs_only_when_kept()
    oauth = settings.slack_client_id is not None and settings.slack_client_secret is not None
    if client is None:
        token = None if oauth else _secret(settings.slack_bot_token)
        client = AsyncWebClient(
            token=token,
            base_url=settings.slack_api_url,
            timeout=SLACK_TIMEOUT_S,
            session=session,
        )
    install_retry_handlers(client)
    deduper = EventDeduper(store, queue=jobs)
    intake = build_intake_middleware(deduper, metrics, event_job)
    signing_secret = _secret(settings.slack_signing_secret) or ""
    authorize: AsyncInstallationStoreAuthorize | None = None
    if oauth:
        app, authorize = _oauth_app(settings, store, client, signing_secret, intake)
    else:
        app = AsyncApp(
            name="runbook-bot",
            client=client,
            signing_secret=signing_secret,
            before_authorize=intake,
            user_facing_authorize_error_message=_NOT_INSTALLED,
        )
        # Subscribed in the manifest, but one token has no installation rows to delete.
        app.event("app_uninstalled")(_log_lifecycle_event)
        app.event("tokens_revoked")(_log_lifecycle_event)
    delivery = Delivery(metrics)
    bot = Bot(
        settings=settings,
        service=service,
        store=store,
        answers=AnswerStore(store),
        delivery=delivery,
        metrics=metrics,
        tasks=tasks,
        answer_slots=asyncio.Semaphore(settings.max_concurrent_answers),
        intake=deduper,
        jobs=jobs,
        job_handlers=job_handlers,
        clients=SlackClients(client, authorize),
    )
    # The incident channel's buttons go first: the mention and action modules end with
    # catch-alls, and Bolt runs only the first listener that matches.
    register_message_events(bot)  # job handlers only: intake queues the messages it answers
    register_home(app, build_home_page(store=store, settings=settings, jobs=jobs, tasks=tasks))
    register_incident_actions(app, bot)
    register_mentions(app, bot)
    register_commands(app, bot)
    register_shortcuts(app, bot)
    register_drafts(app, bot)
    register_draft_offers(app, bot)
    register_actions(app, bot)
    register_feedback_form(app, bot)
    app.error(ErrorReporter(delivery, metrics).handle)
    return app


def _oauth_app(
    settings: Settings,
    store: Store,
    client: AsyncWebClient,
    signing_secret: str,
    intake: Callable[..., Awaitable[BoltResponse | None]],
) -> tuple[AsyncApp, AsyncInstallationStoreAuthorize]:
    client_id = str(settings.slack_client_id)
    client_secret = _secret(settings.slack_client_secret) or ""
    # Refuses to start without RUNBOOK_ENCRYPTION_KEYS: tokens are never stored in plaintext.
    cipher = TokenCipher.from_setting(
        settings.encryption_keys, sealing="Slack tokens stored in OAuth mode"
    )
    installations = PostgresInstallationStore(store, client_id=client_id, cipher=cipher)
    oauth_settings = AsyncOAuthSettings(
        client_id=client_id,
        client_secret=client_secret,
        scopes=list(BOT_SCOPES),
        user_scopes=[],
        install_path=INSTALL_PATH,
        redirect_uri_path=REDIRECT_PATH,
        installation_store=installations,
        state_store=PostgresOAuthStateStore(store),
        callback_options=install_callbacks(store, settings),  # self-service: install → tenant
    )
    # Caches auth.test per token (Bolt would call it on every request); rotated tokens are new
    # keys, and the installation itself is still looked up each time, so uninstalls take effect.
    authorize = AsyncInstallationStoreAuthorize(
        logger=logger,
        client_id=client_id,
        client_secret=client_secret,
        installation_store=installations,
        cache_enabled=True,
        token_rotation_expiration_minutes=oauth_settings.token_rotation_expiration_minutes,
        client=client,  # rotation goes to SLACK_API_URL with the app's retry policy
    )
    app = AsyncApp(
        name="runbook-bot",
        client=client,
        signing_secret=signing_secret,
        before_authorize=intake,
        # Bolt annotates a plain callable; an AsyncAuthorize instance is what it checks for.
        authorize=authorize,  # type: ignore[arg-type]
        installation_store=installations,
        oauth_settings=oauth_settings,
        user_facing_authorize_error_message=_NOT_INSTALLED,
    )
    register_install_lifecycle(app, store, settings, installations)
    return app, authorize


class _WithholdBody(logging.Filter):
    """Bolt logs a rejected request's whole body at INFO: someone's question, in the logs."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg, record.args = "Invalid request signature detected (body withheld)", ()
        return True


_WITHHOLD_BODY = _WithholdBody()


def _withhold_bodies_from_bolt_logs() -> None:
    bolt_verification = logging.getLogger("slack_bolt.RequestVerification")
    if _WITHHOLD_BODY not in bolt_verification.filters:
        bolt_verification.addFilter(_WITHHOLD_BODY)


def _format_request_logs_only_when_kept() -> None:
    """slack_sdk formats a debug line of every Web API request and response (a card's whole
    JSON) whenever its logger's own level is unset: it reads ``logger.level``, which is then 0
    (NOTSET), not the level in effect, and logging drops the line. Pinning the level in effect
    now (DEBUG under ``-v``) skips that work, 2 % of a worker's event loop."""
    sdk = logging.getLogger("slack_sdk.web.async_base_client")
    if sdk.level == logging.NOTSET:
        sdk.setLevel(sdk.getEffectiveLevel())


async def _log_lifecycle_event(event: dict[str, object]) -> None:
    logger.warning("Slack sent %s; remove SLACK_BOT_TOKEN if the app is gone", event.get("type"))


def _secret(value: SecretStr | None) -> str | None:
    return value.get_secret_value() if value is not None else None
