"""The ``runbook`` console script's Slack commands, run as a user would (a child process)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from urllib.parse import unquote

import pytest

from bot.ask_cli import BUILDER_URL
from bot.slack.modes import slack_mode
from rag import IngestReport, Settings

REPO = Path(__file__).resolve().parents[1]


def runbook(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "RUNBOOK_"))}
    return subprocess.run(
        [sys.executable, "-c", "import sys; from bot.cli import main; sys.exit(main())", *args],
        cwd=REPO,
        env={**clean, **(env or {})},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_serve_without_slack_settings_names_every_missing_variable() -> None:
    done = runbook("serve")
    assert done.returncode == 2
    for name in ("SLACK_SIGNING_SECRET", "SLACK_BOT_TOKEN", "SLACK_CLIENT_ID", "SLACK_APP_TOKEN"):
        assert name in done.stderr


@pytest.mark.parametrize(
    ("partial", "named"),
    [
        ({"SLACK_SIGNING_SECRET": "s"}, "SLACK_BOT_TOKEN"),
        ({"SLACK_BOT_TOKEN": "xoxb-1"}, "SLACK_SIGNING_SECRET"),
        ({"SLACK_APP_TOKEN": "xapp-1"}, "SLACK_BOT_TOKEN"),
        (
            {"SLACK_SIGNING_SECRET": "s", "SLACK_CLIENT_ID": "1.2", "SLACK_CLIENT_SECRET": "c"},
            "RUNBOOK_ENCRYPTION_KEYS",
        ),
    ],
)
def test_start_with_a_partial_slack_configuration_exits_naming_what_is_missing(
    partial: dict[str, str], named: str, tmp_path: Path
) -> None:
    # An unreachable database: if start fell back to the demo, it would fail differently.
    env = {
        **partial,
        "DATABASE_URL": "postgresql://127.0.0.1:9/none",
        "RUNBOOK_DATA_DIR": str(tmp_path),
    }
    done = runbook("start", "--corpus", str(tmp_path), env=env)
    assert done.returncode == 2, done.stderr
    assert named in done.stderr and "running the local demo" not in done.stderr


@pytest.mark.parametrize(
    ("configured", "kind", "missing"),
    [
        ({"slack_signing_secret": "s", "slack_bot_token": "xoxb-1"}, "http", ()),
        (
            {
                "slack_signing_secret": "s",
                "slack_client_id": "1.2",
                "slack_client_secret": "c",
                "encryption_keys": "k",
            },
            "http",
            (),
        ),
        (
            {"slack_signing_secret": "s", "slack_client_id": "1.2", "slack_client_secret": "c"},
            None,
            ("RUNBOOK_ENCRYPTION_KEYS",),
        ),
        ({"slack_app_token": "xapp-1", "slack_bot_token": "xoxb-1"}, "socket", ()),
        ({"slack_app_token": "xapp-1"}, None, ("SLACK_BOT_TOKEN",)),
        ({"slack_bot_token": "xoxb-1"}, None, ("SLACK_SIGNING_SECRET",)),
        ({"slack_signing_secret": "s", "slack_client_id": "1.2"}, None, ("SLACK_CLIENT_SECRET",)),
    ],
)
def test_slack_mode_follows_the_credentials_given(
    configured: dict[str, str], kind: str | None, missing: tuple[str, ...]
) -> None:
    mode = slack_mode(Settings.model_validate(configured))  # validation only: no env, no .env
    assert (mode.kind, mode.missing) == (kind, missing)
    if missing:
        assert all(name in mode.explain() for name in missing)


def test_ask_blocks_prints_only_the_cards_json_and_its_builder_link_on_stderr(
    settings: Settings, demo_corpus: IngestReport
) -> None:
    assert settings.database_url is not None
    env = {
        "DATABASE_URL": settings.database_url.get_secret_value(),
        "RUNBOOK_DATA_DIR": str(settings.data_dir),
    }
    question = "payments are throwing 502s, what do I check first?"
    done = runbook("ask", "--tenant", "acme", "--blocks", question, env=env)
    assert done.returncode == 0, done.stderr
    blocks = json.loads(done.stdout)["blocks"]  # stdout is one JSON document, nothing else
    link = done.stderr.strip().rpartition("Preview: ")[2]
    assert blocks and any(block["type"] == "actions" for block in blocks)
    assert link.startswith(BUILDER_URL)
    assert json.loads(unquote(link.strip().removeprefix(BUILDER_URL))) == {"blocks": blocks}
