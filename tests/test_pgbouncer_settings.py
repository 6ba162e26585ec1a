"""Settings for running behind PgBouncer: no prepared statements, migrations over a direct URL."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import SecretStr

from rag import Settings, Store, StoreError


@pytest.mark.parametrize(("value", "expected"), [("none", None), ("", None), ("0", 0), ("7", 7)])
def test_prepare_threshold_reads_none_as_never_prepare(
    value: str, expected: int | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RUNBOOK_PREPARE_THRESHOLD", value)
    assert Settings(_env_file=None).prepare_threshold == expected  # type: ignore[call-arg]


async def test_the_pool_connects_with_the_configured_prepare_threshold(
    settings: Settings,
) -> None:
    store = await Store.open(settings.model_copy(update={"prepare_threshold": None}))
    try:
        async with store.pool.connection() as conn:
            assert conn.prepare_threshold is None
    finally:
        await store.close()


async def test_migrations_run_over_the_migration_url_not_the_pool_url(
    settings: Settings, tmp_path: Path
) -> None:
    unreachable = SecretStr("postgresql://migrator:hunter2@127.0.0.1:1/x")
    with pytest.raises(StoreError) as caught:
        await Store.open(settings.model_copy(update={"migration_database_url": unreachable}))
    assert "cannot connect" in str(caught.value) and "hunter2" not in str(caught.value)
