"""Slack's HTTP routes on the shared aiohttp app: the Events API endpoint and the OAuth pages."""

from __future__ import annotations

import logging

from aiohttp import web
from slack_bolt.adapter.aiohttp import to_aiohttp_response, to_bolt_request
from slack_bolt.async_app import AsyncApp

from bot.core.metrics import BotMetrics
from bot.server import AddRoutes

logger = logging.getLogger(__name__)

EVENTS_PATH = "/slack/events"


def slack_routes(app: AsyncApp, metrics: BotMetrics) -> AddRoutes:
    def add(web_app: web.Application) -> None:
        add_slack_routes(web_app, app, metrics)

    return add


def add_slack_routes(web_app: web.Application, app: AsyncApp, metrics: BotMetrics) -> None:
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
