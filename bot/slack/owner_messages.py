"""Sending a batch of 👎 notes to a runbook's owner in Slack (and a failing source's report to
the tenant's default owner): a user's DM, each member of a user group, or a channel; with the bot
of the workspace the votes came from, and only when that workspace maps to the notes' tenant (a
target like ``#sre`` names a channel in one workspace).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import aiohttp
from slack_sdk.errors import SlackApiError
from slack_sdk.oauth.installation_store.async_installation_store import AsyncInstallationStore
from slack_sdk.web.async_client import AsyncWebClient

from bot.core.owners.queue import SENT, DeliveryDeferred, OwnerBatch
from bot.core.owners.runbook_owners import target_kind
from bot.core.sources.alerts import SourceFailure
from bot.slack.blocks.card import Card
from bot.slack.blocks.owner_note import render_owner_note
from bot.slack.blocks.source_status import render_source_failure
from bot.slack.delivery.posts import slack_error
from bot.slack.delivery.retries import install_retry_handlers
from rag import Store, find_tenant

logger = logging.getLogger(__name__)

# A user group is told member by member; past this many it should be a channel instead.
MAX_GROUP_MEMBERS = 20
SLACK_TIMEOUT_S = 10


@dataclass(frozen=True)
class _Sender:
    """A client for one workspace; ``team_id`` is set for an org-wide token, which must be
    told which workspace a channel name belongs to."""

    client: AsyncWebClient
    team_id: str | None


@dataclass(frozen=True)
class _TokenOwner:
    team_id: str
    enterprise_id: str
    org_wide: bool


class SlackOwnerMessenger:
    """``OwnerMessenger`` over the Slack Web API (see ``bot.core.owners.queue``)."""

    def __init__(
        self,
        *,
        store: Store,
        client: AsyncWebClient,
        installations: AsyncInstallationStore | None,
        api_url: str,
    ) -> None:
        self._store = store
        self._client = client  # the app's client: with one bot token, it carries the token
        self._installations = installations
        self._api_url = api_url
        self._token_owner: _TokenOwner | None = None

    async def send(self, batch: OwnerBatch) -> str:
        workspace_tenant = await find_tenant(
            self._store, team_id=batch.team_id, enterprise_id=batch.enterprise_id
        )
        if workspace_tenant != batch.tenant:
            return "failed:workspace_not_in_tenant"
        return await self._deliver(
            batch.enterprise_id, batch.team_id, batch.target, render_owner_note(batch)
        )

    async def send_source_failure(self, failure: SourceFailure) -> str:
        """``SourceFailureMessenger``: a source that keeps failing, to the default owner."""
        return await self._deliver(
            failure.enterprise_id, failure.team_id, failure.target, render_source_failure(failure)
        )

    async def _deliver(self, enterprise_id: str, team_id: str, target: str, card: Card) -> str:
        try:
            sender = await self._sender_for(enterprise_id, team_id)
            if sender is None:
                return "failed:not_installed"
            for channel in await self._recipients(sender, target):
                # team_id None is left out of the call (an org-wide token needs it).
                await sender.client.chat_postMessage(
                    channel=channel,
                    text=card.text,
                    blocks=card.blocks,
                    unfurl_links=False,
                    unfurl_media=False,
                    team_id=sender.team_id,
                )
        except SlackApiError as exc:
            return f"failed:{slack_error(exc)}"
        except (aiohttp.ClientError, TimeoutError) as exc:
            raise DeliveryDeferred(type(exc).__name__) from exc
        return SENT

    async def _recipients(self, sender: _Sender, target: str) -> list[str]:
        return await owner_recipients(sender.client, target, team_id=sender.team_id)

    async def _sender_for(self, enterprise_id: str, team_id: str) -> _Sender | None:
        """With one bot token, its own workspace (or, org-wide, its organisation's) only; with
        OAuth, the workspace's installation, else its organisation's org-wide one."""
        if self._installations is None:
            owner = await self._owner_of_token()
            if owner.org_wide and enterprise_id and owner.enterprise_id == enterprise_id:
                return _Sender(self._client, team_id or None)
            if not owner.org_wide and owner.team_id == team_id:
                return _Sender(self._client, None)
            return None
        bot = await self._installations.async_find_bot(
            enterprise_id=enterprise_id or None, team_id=team_id or None
        )
        org_wide = False
        if bot is None and enterprise_id:
            bot = await self._installations.async_find_bot(
                enterprise_id=enterprise_id, team_id=None, is_enterprise_install=True
            )
            org_wide = bot is not None
        if bot is None:
            return None
        client = AsyncWebClient(
            token=bot.bot_token, base_url=self._api_url, timeout=SLACK_TIMEOUT_S
        )
        install_retry_handlers(client)
        return _Sender(client, team_id if org_wide and team_id else None)

    async def _owner_of_token(self) -> _TokenOwner:
        if self._token_owner is None:
            response = await self._client.auth_test()
            self._token_owner = _TokenOwner(
                team_id=str(response.get("team_id") or ""),
                enterprise_id=str(response.get("enterprise_id") or ""),
                org_wide=bool(response.get("is_enterprise_install")),
            )
        return self._token_owner


async def owner_recipients(
    client: AsyncWebClient, target: str, *, team_id: str | None = None
) -> list[str]:
    """Where a message to an owner target goes: a user's DM or a channel as is, a user group
    member by member (up to ``MAX_GROUP_MEMBERS``). ``team_id`` for an org-wide token."""
    if target_kind(target) != "usergroup":
        return [target]
    response = await client.usergroups_users_list(usergroup=target, team_id=team_id)
    members = [str(user) for user in response.get("users") or []]
    if len(members) > MAX_GROUP_MEMBERS:
        logger.warning(
            "user group %s has %d members; telling the first %d (map a channel instead)",
            target,
            len(members),
            MAX_GROUP_MEMBERS,
        )
    return members[:MAX_GROUP_MEMBERS]
