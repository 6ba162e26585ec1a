"""Sending a batch of 👎 notes from Teams votes to a runbook's owner: a proactive post into the
owner's Teams channel through the Bot Connector, as replies are sent, and only when the
organisation the votes came from maps to the notes' tenant."""

from __future__ import annotations

from microsoft_agents.activity import ConversationReference
from microsoft_agents.hosting.core import ConnectorClientBase

from bot.core.owners.queue import SENT, DeliveryDeferred, OwnerBatch
from bot.core.owners.runbook_owners import surface_of
from bot.teams.bot import TeamsBot
from bot.teams.cards.owner_note import render_owner_note
from bot.teams.delivery import RETRYABLE_STATUSES, ConnectorError
from bot.teams.tenancy import find_teams_tenant


class TeamsOwnerMessenger:
    """``OwnerMessenger`` over the Bot Connector (see ``bot.core.owners.queue``)."""

    def __init__(self, bot: TeamsBot) -> None:
        self._bot = bot

    async def send(self, batch: OwnerBatch) -> str:
        if await find_teams_tenant(self._bot.store, batch.team_id) != batch.tenant:
            return "failed:organisation_not_in_tenant"
        if surface_of(batch.target) != "teams":
            return "failed:not_a_teams_target"
        if not batch.origin.service_url:
            return "failed:no_service_url"
        reference = ConversationReference.model_validate(
            {
                "channelId": "msteams",
                "serviceUrl": batch.origin.service_url,
                "bot": {"id": f"28:{self._bot.app_id}"},
                "conversation": {
                    "id": batch.target,
                    "conversationType": "channel",
                    "isGroup": True,
                    "tenantId": batch.team_id,
                },
            }
        )
        card = render_owner_note(batch)

        async def post(client: ConnectorClientBase) -> None:
            await self._bot.delivery.post(client, reference, card)

        try:
            await self._bot.in_conversation(reference, post)
        except ConnectorError as exc:
            if exc.outcome_unknown:
                # It may have been posted: sending again could show the owner the notes twice.
                return "failed:outcome_unknown"
            if exc.status is None or exc.status in RETRYABLE_STATUSES or exc.status >= 500:
                raise DeliveryDeferred(str(exc)) from exc
            return f"failed:connector_{exc.status}"
        return SENT
