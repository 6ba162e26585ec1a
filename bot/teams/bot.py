"""What every Teams entry point shares: the channel-neutral core plus the SDK adapter and
delivery, and the way answer work leaves the request."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass
from typing import Any

from microsoft_agents.activity import Activity, ConversationReference
from microsoft_agents.hosting.aiohttp import CloudAdapter
from microsoft_agents.hosting.core import (
    AuthenticationConstants,
    ClaimsIdentity,
    ConnectorClientBase,
    TurnContext,
)

from bot.core.conversation import Conversation
from bot.core.dedupe import EventDeduper
from bot.core.tasks import BackgroundTasks
from bot.teams.delivery import Delivery
from bot.teams.metrics import TeamsMetrics
from bot.teams.threads import dedupe_key

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class TeamsBot(Conversation):
    """The Teams app's collaborators, handed to every handler."""

    adapter: CloudAdapter
    app_id: str
    local: bool  # TEAMS_ALLOW_UNAUTHENTICATED: outbound calls go without a token
    delivery: Delivery
    deduper: EventDeduper
    teams_metrics: TeamsMetrics

    async def first_delivery(self, activity: Activity) -> bool:
        """False for a copy of an activity already taken (Teams redelivers after ~15 s)."""
        key = dedupe_key(activity)
        if key is None or await self.deduper.first_delivery(key):
            return True
        self.teams_metrics.duplicates_dropped.inc()
        logger.info("dropped duplicate Teams activity %s", activity.id)
        return False

    async def in_conversation(
        self,
        reference: ConversationReference,
        work: Callable[[ConnectorClientBase], Awaitable[None]],
    ) -> None:
        """Run ``work`` with a connector client for ``reference``'s conversation, after the
        request that asked for it has been answered (the request's own client is closed)."""

        async def turn(context: TurnContext) -> None:
            # The SDK keys its services by their abstract base class.
            client = context.services.get(ConnectorClientBase)  # type: ignore[type-abstract]
            if client is None:
                raise RuntimeError("the SDK gave the continuation turn no connector client")
            await work(client)

        continuation = Activity(type="event", name="ContinueConversation")
        continuation.apply_conversation_reference(reference, is_incoming=True)
        if self.local:
            anonymous = ClaimsIdentity({}, None)
            await self.adapter.continue_conversation_with_claims(
                anonymous, continuation, turn, AuthenticationConstants.AGENTS_SDK_SCOPE
            )
        else:
            await self.adapter.continue_conversation(self.app_id, continuation, turn)


def run_in_background(tasks: BackgroundTasks, work: Coroutine[Any, Any, None]) -> None:
    """Start answer work after the HTTP response: the one place a durable job queue would
    plug in. The task is adopted (drained on shutdown) as its first step."""

    async def adopted() -> None:
        tasks.adopt_current()
        try:
            await work
        except Exception:
            # Each job shows its own failure card; this only catches what could not even
            # reach the conversation (e.g. no outbound token).
            logger.exception("Teams background job failed")

    # Until its first step runs, the loop's scheduled callback holds the task; from then on
    # ``tasks`` does.
    asyncio.get_running_loop().create_task(adopted())
