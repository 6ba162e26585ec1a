"""Teams' typing indicator: the first sign of work. A message to the bot (a mention, a chat)
shows it from its own turn, before the request is answered, whatever the queue holds; work that
arrives otherwise (the message action, alert posts, follow-ups) shows it when its job starts.

Best effort and never retried: it is progress, not content, and Teams clears it by itself after
a few seconds or when the bot's next message arrives. An answer that may end in silence (an
alert post, a follow-up) shows only this, so nothing is left to take back.
"""

from __future__ import annotations

import asyncio
import logging

import aiohttp
from microsoft_agents.activity import Activity, ConversationReference
from microsoft_agents.hosting.core import ConnectorClientBase, TurnContext

logger = logging.getLogger(__name__)

TYPING_TIMEOUT_S = 5.0


async def show_typing_now(context: TurnContext) -> None:
    """From the turn itself: the reply to the activity being handled."""
    try:
        async with asyncio.timeout(TYPING_TIMEOUT_S):
            await context.send_activity(Activity(type="typing"))
    except (aiohttp.ClientError, TimeoutError) as exc:
        logger.info("typing indicator not shown: %s", type(exc).__name__)


async def show_typing(client: ConnectorClientBase, reference: ConversationReference) -> None:
    conversation = reference.conversation.id if reference.conversation else None
    if not conversation:
        return
    typing = Activity(type="typing").apply_conversation_reference(
        reference.model_copy(update={"activity_id": None})
    )
    try:
        async with asyncio.timeout(TYPING_TIMEOUT_S):
            await client.conversations.send_to_conversation(conversation, typing)
    except (aiohttp.ClientError, TimeoutError) as exc:
        logger.info("typing indicator not shown: %s", type(exc).__name__)
