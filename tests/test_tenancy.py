"""Which installation a payload belongs to and who is asking, for the shapes Slack sends:
workspace and org-wide installs, inside one organisation and across a Slack Connect channel."""

from __future__ import annotations

from typing import Any

from bot.slack.tenancy import Origin, origin_of


def event(authorization: dict[str, Any], **fields: Any) -> dict[str, Any]:
    envelope = {
        "type": "event_callback",
        "authorizations": [{"is_bot": True, "user_id": "UBOT", **authorization}],
    }
    return {**envelope, **fields}


def test_a_connect_event_takes_the_installation_from_authorizations_not_team_id() -> None:
    body = event(
        {"team_id": "T_ACME", "enterprise_id": None},
        team_id="T_GLOBEX",
        is_ext_shared_channel=True,
        event={"type": "app_mention", "channel": "C1", "team": "T_GLOBEX", "user_team": "T_GLOBEX"},
    )
    origin = origin_of(body)
    assert (origin.team_id, origin.enterprise_id, origin.channel_id) == ("T_ACME", None, "C1")
    assert origin.outsider


def test_a_grid_user_of_the_installing_org_is_inside_a_workspace_install() -> None:
    body = event(
        {"team_id": "T_ACME", "enterprise_id": "E_ACME"},
        team_id="T_ACME",
        event={"type": "app_mention", "channel": "C1", "team": "T_ACME", "user_team": "E_ACME"},
    )
    assert not origin_of(body).outsider


def test_an_org_wide_install_reads_the_workspace_from_the_payload() -> None:
    body = event(
        {"team_id": None, "enterprise_id": "E_ACME", "is_enterprise_install": True},
        team_id="T_ACME_EU",
        enterprise_id="E_ACME",
        event={"type": "app_mention", "channel": "C1", "team": "T_ACME_EU"},
    )
    origin = origin_of(body)
    assert (origin.team_id, origin.enterprise_id, origin.org_wide) == ("T_ACME_EU", "E_ACME", True)
    assert not origin.outsider


def test_an_org_wide_install_in_a_connect_channel_answers_only_its_own_org() -> None:
    shared = {"team_id": "T_GLOBEX", "enterprise_id": "E_ACME", "is_ext_shared_channel": True}
    authorization = {"team_id": None, "enterprise_id": "E_ACME", "is_enterprise_install": True}
    foreign = event(authorization, **shared, event={"team": "T_GLOBEX", "user_team": "T_GLOBEX"})
    own = event(authorization, **shared, event={"team": "T_GLOBEX", "user_team": "E_ACME"})
    assert origin_of(foreign).outsider
    assert not origin_of(own).outsider


def test_an_interaction_asker_is_the_clicking_users_team() -> None:
    body = {
        "type": "block_actions",
        "team": {"id": "T_ACME"},
        "user": {"id": "U_EVE", "team_id": "T_GLOBEX"},
        "channel": {"id": "C1"},
    }
    origin = origin_of(body)
    assert origin == Origin("T_ACME", None, "C1", asker_team_id="T_GLOBEX")
    assert origin.outsider
