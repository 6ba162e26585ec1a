"""Sending a batch of 👎 notes to a runbook's owner in Slack: a user's DM, each member of a
user group, or a channel; with the bot token of the workspace the votes came from.
"""

from __future__ import annotations

import logging

from slack_sdk.errors import SlackApiError
from slack_sdk.oauth.installation_store.async_installation_store import AsyncInstallationStore
from slack_sdk.web.async_client import AsyncWebClient

from bot.core.owner_queue import SENT, OwnerBatch
from bot.core.owners import target_kind
from bot.slack.blocks.owner_note import render_owner_note
from bot.slack.delivery import slack_error
from bot.slack.retries import install_retry_handlers

logger = logging.getLogger(__name__)

# A user group is told member by member; past this many it should be a channel instead.
MAX_GROUP_MEMBERS = 20
SLACK_TIMEOUT_S = 10


class SlackOwnerMessenger:
    """``OwnerMessenger`` over the Slack Web API (see ``bot.core.owner_queue``)."""

    def __init__(
        self,
        *,
        client: AsyncWebClient,
        installations: AsyncInstallationStore | None,
        api_url: str,
    ) -> None:
        self._client = client  # the app's client: with one bot token, it carries the token
        self._installations = installations
        self._api_url = api_url

    async def send(self, batch: OwnerBatch) -> str:
        client = await self._client_for(batch.enterprise_id, batch.team_id)
        if client is None:
            return "failed:not_installed"
        card = render_owner_note(batch)
        try:
            for channel in await owner_recipients(client, batch.target):
                await client.chat_postMessage(
                    channel=channel,
                    text=card.text,
                    blocks=card.blocks,
                    unfurl_links=False,
                    unfurl_media=False,
                )
        except SlackApiError as exc:
            return f"failed:{slack_error(exc)}"
        return SENT

    async def _client_for(self, enterprise_id: str, team_id: str) -> AsyncWebClient | None:
        """The app's own client with one bot token; with OAuth, that workspace's install."""
        if self._installations is None:
            return self._client
        bot = await self._installations.async_find_bot(
            enterprise_id=enterprise_id or None, team_id=team_id or None
        )
        if bot is None:
            return None
        client = AsyncWebClient(
            token=bot.bot_token, base_url=self._api_url, timeout=SLACK_TIMEOUT_S
        )
        install_retry_handlers(client)
        return client


async def owner_recipients(client: AsyncWebClient, target: str) -> list[str]:
    """Where a message to an owner target goes: a user's DM or a channel as is, a user group
    member by member (up to ``MAX_GROUP_MEMBERS``)."""
    if target_kind(target) != "usergroup":
        return [target]
    response = await client.usergroups_users_list(usergroup=target)
    members = [str(user) for user in response.get("users") or []]
    if len(members) > MAX_GROUP_MEMBERS:
        logger.warning(
            "user group %s has %d members; telling the first %d (map a channel instead)",
            target,
            len(members),
            MAX_GROUP_MEMBERS,
        )
    return members[:MAX_GROUP_MEMBERS]
