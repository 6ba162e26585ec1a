"""``runbook serve`` with Teams, ``runbook teams …`` and the app package, run as a user would."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import struct
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from bot.core.alerts.channel_settings import ChannelSettings, channel_settings
from bot.teams.config import is_loopback, teams_mode
from bot.teams.tenancy import add_teams_tenant
from rag import IngestReport, Settings, Store
from tests.adaptive_cards import card_problems
from tests.fakes.bot_connector import FakeBotConnector
from tests.teams_harness import APP_ID, mention, new_aad_tenant

REPO = Path(__file__).resolve().parents[1]
CHILD = "import sys; from bot.cli import main; sys.exit(main())"


def child_env(extra: dict[str, str]) -> dict[str, str]:
    clean = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("SLACK_", "RUNBOOK_", "TEAMS_")) and k != "DATABASE_URL"
    }
    return {**clean, "PYTHONPATH": str(REPO), **extra}


def runbook(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", CHILD, *args],
        cwd=REPO,
        env=child_env(env or {}),
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize(
    ("configured", "kind", "missing"),
    [
        ({}, None, ()),
        (
            {"teams_app_id": APP_ID, "teams_app_password": "p", "teams_tenant_id": "t"},
            "production",
            (),
        ),
        ({"teams_app_id": APP_ID}, None, ("TEAMS_APP_PASSWORD", "TEAMS_TENANT_ID")),
        ({"teams_allow_unauthenticated": True, "teams_app_id": APP_ID}, "local", ()),
        ({"teams_allow_unauthenticated": True}, None, ("TEAMS_APP_ID",)),
        (
            {"teams_allow_unauthenticated": True, "teams_app_id": APP_ID, "teams_tenant_id": "t"},
            None,
            (),
        ),
    ],
)
def test_teams_mode_follows_the_settings(
    configured: dict[str, Any], kind: str | None, missing: tuple[str, ...]
) -> None:
    mode = teams_mode(Settings(_env_file=None, **configured))  # type: ignore[call-arg]
    assert (mode.kind, mode.missing) == (kind, missing)


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.8.0.1", True),
        ("::1", True),
        ("localhost", True),
        ("0.0.0.0", False),
        ("10.0.0.5", False),
        ("bot.example.com", False),
    ],
)
def test_only_loopback_addresses_count_as_local(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


def test_serve_refuses_the_local_mode_on_a_reachable_address() -> None:
    env = {"TEAMS_APP_ID": APP_ID, "TEAMS_ALLOW_UNAUTHENTICATED": "true"}
    done = runbook("serve", "--host", "0.0.0.0", env=env)
    assert done.returncode == 2
    assert "loopback" in done.stderr and "0.0.0.0" in done.stderr


@pytest.mark.parametrize(
    ("registration", "named"),
    [
        ({"TEAMS_APP_PASSWORD": "p"}, "TEAMS_APP_PASSWORD"),
        ({"TEAMS_TENANT_ID": "11111111-2222-4333-8444-555555555555"}, "TEAMS_TENANT_ID"),
    ],
)
def test_serve_refuses_the_local_mode_beside_a_production_registration(
    registration: dict[str, str], named: str
) -> None:
    # An unreachable database: the refusal must come before serve touches anything.
    env = {
        "TEAMS_APP_ID": APP_ID,
        "TEAMS_ALLOW_UNAUTHENTICATED": "true",
        "DATABASE_URL": "postgresql://127.0.0.1:1/none",
        **registration,
    }
    done = runbook("serve", "--host", "127.0.0.1", env=env)
    assert done.returncode == 2
    assert "TEAMS_ALLOW_UNAUTHENTICATED" in done.stderr and named in done.stderr


PRODUCTION = {
    "TEAMS_APP_ID": APP_ID,
    "TEAMS_APP_PASSWORD": "p",
    "TEAMS_TENANT_ID": "11111111-2222-4333-8444-555555555555",
    "TEAMS_GRAPH_ALERTS": "true",
    "DATABASE_URL": "postgresql://127.0.0.1:1/none",
}
KEYS = {"RUNBOOK_ENCRYPTION_KEYS": "wcdXBrxmcU3gEVqsEGm0MnDVfdI6ttX0MNG2F9kBqak="}


@pytest.mark.parametrize(
    ("env", "named"),
    [
        ({"RUNBOOK_PUBLIC_URL": "https://runbooks.example.com"}, "RUNBOOK_ENCRYPTION_KEYS"),
        (KEYS, "RUNBOOK_PUBLIC_URL"),
        ({**KEYS, "RUNBOOK_PUBLIC_URL": "http://runbooks.example.com"}, "https"),
    ],
)
def test_serve_refuses_graph_alerts_without_a_public_https_url_and_encryption_keys(
    env: dict[str, str], named: str
) -> None:
    # An unreachable database: the refusal must come before serve touches anything.
    done = runbook("serve", env={**PRODUCTION, **env})
    assert done.returncode == 2
    assert "TEAMS_GRAPH_ALERTS" in done.stderr or "Graph" in done.stderr
    assert named in done.stderr


def test_serve_refuses_graph_alerts_in_local_mode_towards_microsoft() -> None:
    env = {
        "TEAMS_APP_ID": APP_ID,
        "TEAMS_ALLOW_UNAUTHENTICATED": "true",
        "TEAMS_GRAPH_ALERTS": "true",
        "RUNBOOK_PUBLIC_URL": "http://127.0.0.1:4400",
        "DATABASE_URL": "postgresql://127.0.0.1:1/none",
        **KEYS,
    }
    done = runbook("serve", "--host", "127.0.0.1", env=env)
    assert done.returncode == 2 and "TEAMS_GRAPH_URL" in done.stderr


def test_serve_names_what_a_half_configured_teams_lacks() -> None:
    done = runbook("serve", env={"TEAMS_APP_ID": APP_ID})
    assert done.returncode == 2
    assert "TEAMS_APP_PASSWORD and TEAMS_TENANT_ID" in done.stderr


async def test_serve_with_teams_only_answers_on_api_messages(
    database_url: str, data_dir: Path, store: Store
) -> None:
    aad = new_aad_tenant()
    await add_teams_tenant(store, aad, "acme")
    port, internal_port = free_port(), free_port()
    env = {
        "RUNBOOK_INTERNAL_HOST": "127.0.0.1",
        "RUNBOOK_INTERNAL_PORT": str(internal_port),
        "TEAMS_APP_ID": APP_ID,
        "TEAMS_ALLOW_UNAUTHENTICATED": "true",
        "DATABASE_URL": database_url,
        "RUNBOOK_DATA_DIR": str(data_dir),
    }
    server = await asyncio.create_subprocess_exec(
        *(sys.executable, "-c", CHILD, "serve", "--host", "127.0.0.1", "--port", str(port)),
        cwd=REPO,
        env=child_env(env),
        stderr=asyncio.subprocess.PIPE,
        start_new_session=True,
    )
    try:
        async with FakeBotConnector() as connector, aiohttp.ClientSession() as http:
            url = f"http://127.0.0.1:{port}"
            for _ in range(300):
                try:
                    async with http.get(f"http://127.0.0.1:{internal_port}/healthz") as health:
                        if health.status == 200:
                            break
                except aiohttp.ClientConnectionError:
                    await asyncio.sleep(0.1)
            bare = mention("", service_url=connector.service_url, aad_tenant=aad)
            async with http.post(url + "/api/messages", json=bare) as response:
                assert response.status == 202
            [help_card] = await connector.wait_for_messages(bare["conversation"]["id"], 1)
            assert "Ask runbooks" in json.dumps(help_card.final)
            async with http.post(url + "/slack/events", json={}) as slack:
                assert slack.status == 404, "Slack is not configured, so not served"
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        _, stderr = await asyncio.wait_for(server.communicate(), 30)
    assert b"Teams local mode" in stderr


async def test_teams_tenant_and_channel_commands_round_trip(
    database_url: str, data_dir: Path
) -> None:
    aad = new_aad_tenant()
    env = {"DATABASE_URL": database_url, "RUNBOOK_DATA_DIR": str(data_dir)}

    async def run(*args: str) -> subprocess.CompletedProcess[str]:
        return await asyncio.to_thread(runbook, "teams", *args, env=env)

    added = await run("tenant", "add", aad.upper(), "acme")
    assert added.returncode == 0 and f"{aad} → tenant acme" in added.stdout
    assert f"{aad} → acme" in (await run("tenant", "list")).stdout
    mapped = await run("channel", "map", aad, "19:pay@thread.tacv2;messageid=1", "payments")
    assert mapped.returncode == 0 and "19:pay@thread.tacv2" in mapped.stdout
    clash = await run("tenant", "add", aad, "globex")
    assert clash.returncode == 2 and "already mapped to tenant 'acme'" in clash.stderr
    assert (await run("tenant", "add", "not-a-guid", "acme")).returncode == 2
    assert (await run("tenant", "remove", aad)).returncode == 0
    assert (await run("tenant", "remove", aad)).returncode == 1


async def test_teams_channel_switches_are_stored_per_channel_and_listed(
    database_url: str, data_dir: Path, store: Store
) -> None:
    aad = new_aad_tenant()
    env = {"DATABASE_URL": database_url, "RUNBOOK_DATA_DIR": str(data_dir)}
    incidents, quiet = "19:incidents@thread.tacv2", "19:quiet@thread.tacv2"

    async def run(*args: str) -> subprocess.CompletedProcess[str]:
        return await asyncio.to_thread(runbook, "teams", "channel", *args, env=env)

    unmapped = await run("alerts", aad, incidents, "on")
    assert unmapped.returncode == 2 and "runbook teams tenant add" in unmapped.stderr
    await add_teams_tenant(store, aad, "acme")
    alerts = await run("alerts", aad.upper(), f"{incidents};messageid=17", "on", "--json")
    assert alerts.returncode == 0, alerts.stderr
    assert json.loads(alerts.stdout) == {
        "aad_tenant_id": aad,
        "tenant": "acme",
        "channel_id": incidents,
        "alerts": True,
        "follow_ups": False,
    }
    follow = await run("follow-ups", aad, incidents, "on")
    assert follow.returncode == 0 and "alerts on, follow-ups on" in follow.stdout
    assert (await run("follow-ups", aad, quiet, "on")).returncode == 0
    assert (await run("follow-ups", aad, quiet, "off")).returncode == 0
    assert (await run("alerts", aad, "general", "on")).returncode == 2, "not a 19: channel id"

    listed = await run("list", aad, "--json")
    rows = [json.loads(line) for line in listed.stdout.splitlines()]
    assert [(r["channel_id"], r["alerts"], r["follow_ups"]) for r in rows] == [
        (incidents, True, True),
        (quiet, False, False),
    ]
    # What the Teams surface reads before an unprompted answer: the core's switches.
    assert await channel_settings(store, "acme", aad, incidents) == ChannelSettings(True, True)
    assert await channel_settings(store, "acme", aad, quiet) == ChannelSettings(False, False)


async def test_alerts_with_a_team_id_ask_for_a_graph_subscription_until_switched_off(
    database_url: str, data_dir: Path, store: Store
) -> None:
    aad, channel = new_aad_tenant(), "19:alerts@thread.tacv2"
    group = "B3F1C2D4-5E6F-4A7B-8C9D-0E1F2A3B4C5D"
    env = {
        "DATABASE_URL": database_url,
        "RUNBOOK_DATA_DIR": str(data_dir),
        "TEAMS_GRAPH_ALERTS": "true",
    }

    async def run(*args: str) -> subprocess.CompletedProcess[str]:
        return await asyncio.to_thread(runbook, "teams", "channel", "alerts", *args, env=env)

    await add_teams_tenant(store, aad, "acme")
    without = await run(aad, channel, "on")
    assert without.returncode == 0 and "--team GROUP_ID" in without.stderr
    assert (await run(aad, channel, "on", "--team", "general")).returncode == 2, "not a GUID"
    on = await run(aad, channel, "on", "--team", group, "--json")
    assert on.returncode == 0, on.stderr
    state = json.loads(on.stdout)["graph_subscription"]
    assert state == f"being created (team {group.lower()})"
    again = await run(aad, channel, "on", "--json")  # the team id is remembered
    assert json.loads(again.stdout)["graph_subscription"] == state and not again.stderr
    off = await run(aad, channel, "off")
    assert off.returncode == 0 and "Graph: being deleted" in off.stdout


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def test_package_writes_the_manifest_and_icons_at_the_zip_root(tmp_path: Path) -> None:
    out = tmp_path / "app.zip"
    done = runbook(
        "teams", "package", "--app-id", APP_ID, "--host", "bot.example.com", "--out", str(out)
    )
    assert done.returncode == 0, done.stderr
    with zipfile.ZipFile(out) as package:
        assert sorted(package.namelist()) == ["color.png", "manifest.json", "outline.png"]
        manifest = json.loads(package.read("manifest.json"))
        assert png_size(package.read("color.png")) == (192, 192)
        assert png_size(package.read("outline.png")) == (32, 32)
    assert manifest["manifestVersion"] == "1.30"
    [bot] = manifest["bots"]
    assert (bot["botId"], sorted(bot["scopes"])) == (APP_ID, ["groupChat", "personal", "team"])
    commands = manifest["composeExtensions"][0]["commands"]
    assert [(c["id"], c["type"], c["context"], c["fetchTask"]) for c in commands] == [
        ("askRunbooks", "action", ["message"], True),
        ("draftRunbook", "action", ["message"], True),
    ]
    assert commands[1]["title"] == "Draft a runbook from this thread"
    assert manifest["validDomains"] == ["bot.example.com"]
    assert manifest["webApplicationInfo"] == {
        "id": APP_ID,
        "resource": f"api://bot.example.com/{APP_ID}",
    }
    assert len(manifest["description"]["short"]) <= 80


def test_package_asks_only_for_channel_messages_without_a_mention(tmp_path: Path) -> None:
    out = tmp_path / "app.zip"
    done = runbook(
        "teams", "package", "--app-id", APP_ID, "--host", "bot.example.com", "--out", str(out)
    )
    assert done.returncode == 0, done.stderr
    with zipfile.ZipFile(out) as package:
        manifest = json.loads(package.read("manifest.json"))
    # Manifest v1.30's place for resource-specific consent; the legacy
    # webApplicationInfo.applicationPermissions list stays unused.
    assert manifest["authorization"] == {
        "permissions": {
            "resourceSpecific": [{"name": "ChannelMessage.Read.Group", "type": "Application"}]
        }
    }
    assert "applicationPermissions" not in manifest["webApplicationInfo"]
    assert manifest["webApplicationInfo"]["id"] == APP_ID, "RSC is granted to this app id"
    assert len(manifest["description"]["full"]) <= 4000


def test_package_refuses_an_app_id_that_is_not_a_guid(tmp_path: Path) -> None:
    done = runbook(
        "teams",
        "package",
        "--app-id",
        "nope",
        "--host",
        "https://x/y",
        "--out",
        str(tmp_path / "a.zip"),
    )
    assert done.returncode == 2 and "not a GUID" in done.stderr


def test_ask_teams_card_prints_a_valid_adaptive_card(
    settings: Settings, acme_corpus: IngestReport
) -> None:
    assert settings.database_url is not None
    env = {
        "DATABASE_URL": settings.database_url.get_secret_value(),
        "RUNBOOK_DATA_DIR": str(settings.data_dir),
    }
    question = "payments are throwing 502s, what do I check first?"
    done = runbook("ask", "--tenant", "acme", "--teams-card", question, env=env)
    assert done.returncode == 0, done.stderr
    card = json.loads(done.stdout)
    assert card_problems(card) == []
    assert any(e["type"] == "Container" and e["isVisible"] is False for e in card["body"])


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])
