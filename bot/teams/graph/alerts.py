"""``TEAMS_GRAPH_ALERTS=true``: alert posts of switched-on channels taken from Microsoft Graph
change notifications too, for posts by apps that bot delivery may not carry (see
docs/teams-incident-channels.md). Registers the two job kinds and returns the notification
route; ``runbook serve`` also runs the subscription schedule (``graph_schedule_running``)."""

from __future__ import annotations

from bot.core.token_cipher import TokenCipher
from bot.server import AddRoutes
from bot.teams.bot import TeamsBot
from bot.teams.graph.client import GraphClient
from bot.teams.graph.config import notification_url
from bot.teams.graph.hook import graph_hook_routes
from bot.teams.graph.messages import GRAPH_MESSAGE, GraphMessageJob
from bot.teams.graph.subscriptions import SUBSCRIPTION_KIND, SubscriptionJob


def register_graph_alerts(bot: TeamsBot) -> AddRoutes:
    settings = bot.settings
    cipher = TokenCipher.from_setting(
        settings.encryption_keys, sealing="Graph subscriptions' client states"
    )
    graph = GraphClient(settings)
    bot.job_handlers.register(GRAPH_MESSAGE, GraphMessageJob(bot, graph))
    subscriptions = SubscriptionJob(
        store=bot.store, graph=graph, cipher=cipher, notification_url=notification_url(settings)
    )
    bot.job_handlers.register(SUBSCRIPTION_KIND, subscriptions)
    return graph_hook_routes(bot, cipher)
