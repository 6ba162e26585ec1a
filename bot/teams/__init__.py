"""The Microsoft Teams surface: an Agents SDK app on the shared aiohttp server, Adaptive Cards.

``POST /api/messages`` takes Bot Framework activities (JWT-verified); the answer flow is the
channel-neutral ``bot.core`` one, rendered by ``bot.teams.cards`` and delivered through the
Bot Connector with retries.
"""
