"""``runbook channel map`` for Enterprise Grid: a workspace mapped with its org id is found."""

from __future__ import annotations

import uuid

from rag import Settings, Store, add_workspace, channel_service
from tests.test_slack_cli import runbook


async def test_channel_map_finds_an_enterprise_grid_workspace_with_enterprise(
    settings: Settings, store: Store, unique_tenant: str
) -> None:
    assert settings.database_url is not None
    team, org = f"T_{uuid.uuid4().hex[:8].upper()}", f"E_{uuid.uuid4().hex[:8].upper()}"
    await add_workspace(store, team, unique_tenant, enterprise_id=org)
    env = {
        "DATABASE_URL": settings.database_url.get_secret_value(),
        "RUNBOOK_DATA_DIR": str(settings.data_dir),
    }

    without = runbook("channel", "map", team, "C_GRID", "payments", env=env)
    assert without.returncode == 2 and "--enterprise" in without.stderr
    done = runbook("channel", "map", team, "C_GRID", "payments", "--enterprise", org, env=env)

    assert done.returncode == 0, done.stderr
    assert await channel_service(store, unique_tenant, team, "C_GRID") == "payments"
