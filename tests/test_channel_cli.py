"""``runbook channel alerts|follow-ups TEAM CHANNEL on|off``, run as a user would (a child
process against the session's database)."""

from __future__ import annotations

import uuid

from bot.core.channel_settings import ChannelSettings, channel_settings
from rag import Store, add_workspace
from tests.test_slack_cli import runbook


async def test_channel_switches_are_stored_for_the_workspaces_tenant(
    store: Store, database_url: str, unique_tenant: str
) -> None:
    team = f"T_{uuid.uuid4().hex[:8].upper()}"
    await add_workspace(store, team, unique_tenant)
    env = {"DATABASE_URL": database_url}

    alerts = runbook("channel", "alerts", team, "C_ALERTS", "on", env=env)
    follow_ups = runbook("channel", "follow-ups", team, "C_ALERTS", "off", env=env)

    assert alerts.returncode == 0, alerts.stderr
    assert f"channel C_ALERTS in {team} ({unique_tenant}): alerts on" in alerts.stdout
    assert follow_ups.returncode == 0, follow_ups.stderr
    stored = await channel_settings(store, unique_tenant, team, "C_ALERTS")
    assert stored == ChannelSettings(alerts=True, follow_ups=False)
    # Untouched channels keep the defaults: alerts off, follow-ups on.
    assert await channel_settings(store, unique_tenant, team, "C_OTHER") == ChannelSettings()


def test_channel_switch_for_an_unmapped_workspace_says_how_to_map_it(database_url: str) -> None:
    done = runbook("channel", "alerts", "T_NOBODY", "C1", "on", env={"DATABASE_URL": database_url})
    assert done.returncode == 2
    assert "not mapped to a tenant" in done.stderr and "runbook workspace add" in done.stderr


def test_channel_switch_refuses_anything_but_on_or_off() -> None:
    done = runbook("channel", "follow-ups", "T1", "C1", "maybe")
    assert done.returncode == 2 and "invalid choice: 'maybe'" in done.stderr
