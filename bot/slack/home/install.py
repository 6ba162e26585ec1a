"""Slack installs and uninstalls as a tenant's lifecycle: the OAuth callback's success makes
the installing workspace (or org) a tenant with its installer as admin (``RUNBOOK_SELF_SERVICE``),
and ``app_uninstalled`` deletes the tokens, as Bolt's own listener does, and starts the
tenant's retention window (``RUNBOOK_UNINSTALL_RETENTION_DAYS``)."""

from __future__ import annotations

import logging

from slack_bolt.async_app import AsyncApp
from slack_bolt.context.async_context import AsyncBoltContext
from slack_bolt.listener.async_builtins import AsyncTokenRevocationListeners
from slack_bolt.oauth.async_callback_options import (
    AsyncCallbackOptions,
    AsyncFailureArgs,
    AsyncSuccessArgs,
)
from slack_bolt.response import BoltResponse
from slack_sdk.oauth.installation_store import Installation
from slack_sdk.oauth.installation_store.async_installation_store import AsyncInstallationStore

from bot.core.admin.lifecycle import InstallPlace, mark_uninstalled, provision_install
from rag import Settings, Store, delete_tenant, find_tenant

logger = logging.getLogger(__name__)


def install_callbacks(store: Store, settings: Settings) -> AsyncCallbackOptions:
    """OAuth callbacks: on success the tenant is set up before Bolt's own success page."""

    async def success(args: AsyncSuccessArgs) -> BoltResponse:
        await provision_slack_install(store, settings, args.installation)
        return await args.default.success(args)

    async def failure(args: AsyncFailureArgs) -> BoltResponse:
        return await args.default.failure(args)

    return AsyncCallbackOptions(success=success, failure=failure)


async def provision_slack_install(
    store: Store, settings: Settings, installation: Installation
) -> str | None:
    """The tenant of a completed install (None when self-service leaves it unmapped)."""
    enterprise = installation.enterprise_id or ""
    org_wide = bool(installation.is_enterprise_install)
    team = "*" if org_wide else installation.team_id or ""
    place = InstallPlace(
        surface="slack",
        install_key=enterprise if org_wide else team,
        display_name=(installation.enterprise_name if org_wide else installation.team_name) or "",
        team_id=team,
        enterprise_id=enterprise,
    )
    mapped = await find_tenant(store, team_id=team, enterprise_id=enterprise)
    if mapped is None and not settings.self_service:
        logger.info("install of %s left unmapped (RUNBOOK_SELF_SERVICE=false)", place.install_key)
        return None
    done = await provision_install(
        store, place, installer=installation.user_id or "", mapped_tenant=mapped
    )
    return done.tenant if done is not None else mapped


def register_install_lifecycle(
    app: AsyncApp, store: Store, settings: Settings, installations: AsyncInstallationStore
) -> None:
    """Bolt's token revocation listeners, plus the tenant's retention window on uninstall."""
    builtin = AsyncTokenRevocationListeners(installations)
    app.event("tokens_revoked")(builtin.handle_tokens_revoked_events)

    async def on_uninstalled(context: AsyncBoltContext) -> None:
        await builtin.handle_app_uninstalled_events(context)
        enterprise = context.enterprise_id or ""
        team = "*" if context.is_enterprise_install else context.team_id or ""
        tenant = await find_tenant(store, team_id=team, enterprise_id=enterprise)
        if tenant is None:
            return
        days = settings.uninstall_retention_days
        if await mark_uninstalled(store, tenant, surface="slack", retention_days=days) and not days:
            await delete_tenant(store, tenant)

    app.event("app_uninstalled")(on_uninstalled)
