"""What every Teams entry point shares: the channel-neutral core plus the SDK adapter and
delivery, and the queue that answer work leaves the request through."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Awaitable, Callable
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
from bot.core.dedupe import Claim, EventDeduper
from bot.core.jobs.queue import JobQueue, JobRequest, JobTenant
from bot.core.jobs.worker import JobHandlers
from bot.teams.delivery import Delivery
from bot.teams.metrics import TeamsMetrics

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class TeamsBot(Conversation):
    """The Teams app's collaborators, handed to every handler."""

    adapter: CloudAdapter
    app_id: str
    local: bool  # TEAMS_ALLOW_UNAUTHENTICATED: outbound calls go without a token
    delivery: Delivery
    intake: EventDeduper  # claims a delivery and queues its job in one transaction
    jobs: JobQueue
    job_handlers: JobHandlers
    teams_metrics: TeamsMetrics

    async def accept(self, key: str | None, kind: str, payload: dict[str, Any]) -> Claim:
        """Claim a delivery and queue its job, before the request is answered. Nothing is
        queued for a copy already taken (Teams redelivers after ~15 s); a claim the database
        did not take in time is held and queued once, later. ``key`` None: a fresh one."""
        key = key or f"teams:{kind}:{uuid.uuid4()}"
        claim = await self.intake.claim(key, JobRequest(kind, key, payload, job_tenant(payload)))
        if claim is not Claim.CLAIMED:
            self.teams_metrics.duplicates_dropped.inc()
            logger.info("Teams delivery %s not queued now (%s)", key, claim.value)
        return claim

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


def job_tenant(payload: dict[str, Any]) -> JobTenant:
    """Whose turn a Teams job takes: the tenant a payload names (a retry's), else its AAD
    organisation's (an answer's), resolved when the job is queued."""
    tenant, aad_tenant = payload.get("tenant"), payload.get("aad_tenant")
    return JobTenant(
        tenant_id=tenant if isinstance(tenant, str) else None,
        teams_aad_tenant=aad_tenant.strip().lower() if isinstance(aad_tenant, str) else None,
    )
