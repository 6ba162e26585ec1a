"""Teams' routes on the shared aiohttp app: ``POST /api/messages`` (JWT-checked there only),
and the app's hooks (Graph's notifications, verified by their own ``clientState``)."""

from __future__ import annotations

import logging
import warnings
from collections.abc import Awaitable, Callable

import pydantic
from aiohttp import web
from microsoft_agents.hosting.aiohttp import start_agent_process

from bot.server import AddRoutes
from bot.teams.app import TeamsApp

logger = logging.getLogger(__name__)

MESSAGES_PATH = "/api/messages"


def teams_routes(app: TeamsApp) -> AddRoutes:
    def add(web_app: web.Application) -> None:
        web_app.router.add_post(MESSAGES_PATH, _messages_handler(app))
        for hook in app.hooks:
            hook(web_app)

    return add


def _messages_handler(
    app: TeamsApp,
) -> Callable[[web.Request], Awaitable[web.StreamResponse]]:
    async def messages(request: web.Request) -> web.StreamResponse:
        identity = await app.authorizer.authorize(request)
        if isinstance(identity, web.Response):
            if identity.status == 401:
                app.bot.teams_metrics.auth_rejections.inc()
            return identity
        with warnings.catch_warnings():
            # The SDK's request adapter reads the identity under this plain string key.
            warnings.simplefilter("ignore", web.NotAppKeyWarning)
            request["claims_identity"] = identity
        try:
            response = await start_agent_process(request, app.agent, app.adapter)
        except pydantic.ValidationError:
            # The SDK parses the body into an Activity outside its own error handling.
            logger.info("refused a Teams request that is not an activity")
            return web.json_response({"error": "not a Bot Framework activity"}, status=400)
        return response if response is not None else web.Response(status=202)

    return messages
