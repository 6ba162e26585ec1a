"""Owner targets and report periods: bad input gets a clear, specific error."""

from __future__ import annotations

import argparse
from datetime import timedelta

import pytest

from bot.cli_parser import parse_since
from bot.core.owners.runbook_owners import (
    list_owner_targets,
    map_owner,
    set_default_owner,
    target_kind,
)
from rag import ConfigurationError, Store, add_workspace


@pytest.mark.parametrize(
    ("target", "kind"),
    [
        ("U024BE7LH", "user"),
        ("W0ENTERPRISE", "user"),
        ("S0614TZR7", "usergroup"),
        ("C0123ABCD", "channel"),
        ("#runbook-feedback", "channel"),
        ("19:a1b2c3d4e5f6@thread.tacv2", "teams_channel"),
        ("19:x@thread.tacv2;messageid=1", None),
        ("team-data-platform", None),
        ("<!channel>", None),
    ],
)
def test_owner_targets_are_recognised_by_their_shape(target: str, kind: str | None) -> None:
    assert target_kind(target) == kind


async def test_mapping_refuses_a_bad_target_and_an_unknown_tenant(
    store: Store, unique_tenant: str
) -> None:
    with pytest.raises(ConfigurationError, match="must be a Slack user"):
        await set_default_owner(store, unique_tenant, "@alice")
    with pytest.raises(ConfigurationError, match="unknown tenant"):
        await map_owner(store, unique_tenant, "sre", "C0SRE")

    await add_workspace(store, "T_OWN_" + unique_tenant, unique_tenant)
    await map_owner(store, unique_tenant, "sre", "C0SRE")
    await map_owner(store, unique_tenant, "sre", "#sre")  # remapping replaces
    await set_default_owner(store, unique_tenant, "C0ALL")
    listed = [(t.name, t.target) for t in await list_owner_targets(store, unique_tenant)]
    assert listed == [("", "C0ALL"), ("sre", "#sre")]


def test_report_periods_read_as_hours_days_or_weeks() -> None:
    assert parse_since("48h") == timedelta(hours=48)
    assert parse_since("7d") == timedelta(days=7)
    assert parse_since("2w") == timedelta(weeks=2)
    for bad in ("0d", "7", "1y", "-1d"):
        with pytest.raises(argparse.ArgumentTypeError, match="is not a period"):
            parse_since(bad)
