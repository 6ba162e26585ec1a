"""``runbook channel alerts|follow-ups TEAM CHANNEL on|off``, run as a user would (a child
process against the session's database)."""

from __future__ import annotations

import uuid

from bot.core.alerts.channel_settings import ChannelSettings, channel_settings
from rag import Store, add_workspace
from tests.test_slack_cli import runbook


async def test_channel_switches_are_stored_for_the_workspaces_tenant(
    store: Store, database_url: str, unique_tenant: str
) -> None:
    team = f"T_{uuid.uuid4().hex[:8].upper()}"
    await add_workspace(store, team, unique_tenant)
    env = {"DATABASE_URL": database_url}

    alerts = runbook("channel", "alerts", team, "C_ALERTS", "on", env=env)
    follow_ups = runbook("channel", "follow-ups", team, "C_ALERTS", "on", env=env)

    assert alerts.returncode == 0, alerts.stderr
    assert f"channel C_ALERTS in {team} ({unique_tenant}): alerts on" in alerts.stdout
    assert follow_ups.returncode == 0, follow_ups.stderr
    stored = await channel_settings(store, unique_tenant, team, "C_ALERTS")
    assert stored == ChannelSettings(alerts=True, follow_ups=True)
    # Untouched channels keep the defaults: both off.
    untouched = await channel_settings(store, unique_tenant, team, "C_OTHER")
    assert untouched == ChannelSettings(alerts=False, follow_ups=False)


async def test_channel_switches_reach_an_enterprise_grid_workspace_with_enterprise(
    store: Store, database_url: str, unique_tenant: str
) -> None:
    """An org-wide install is mapped by enterprise alone (team ``*``): without --enterprise
    its workspaces' channels could not be switched at all."""
    org, team = f"E_{uuid.uuid4().hex[:8].upper()}", f"T_{uuid.uuid4().hex[:8].upper()}"
    await add_workspace(store, "*", unique_tenant, enterprise_id=org)
    env = {"DATABASE_URL": database_url}

    unknown = runbook("channel", "follow-ups", team, "C_GRID", "on", env=env)
    switched = [
        runbook("channel", action, team, "C_GRID", "on", "--enterprise", org, env=env)
        for action in ("alerts", "follow-ups")
    ]

    assert unknown.returncode == 2 and "not mapped to a tenant" in unknown.stderr
    assert [done.returncode for done in switched] == [0, 0], [d.stderr for d in switched]
    stored = await channel_settings(store, unique_tenant, team, "C_GRID")
    assert stored == ChannelSettings(alerts=True, follow_ups=True)


def test_channel_switch_for_an_unmapped_workspace_says_how_to_map_it(database_url: str) -> None:
    done = runbook("channel", "alerts", "T_NOBODY", "C1", "on", env={"DATABASE_URL": database_url})
    assert done.returncode == 2
    assert "not mapped to a tenant" in done.stderr and "runbook workspace add" in done.stderr


def test_channel_switch_refuses_anything_but_on_or_off() -> None:
    done = runbook("channel", "follow-ups", "T1", "C1", "maybe")
    assert done.returncode == 2 and "invalid choice: 'maybe'" in done.stderr
