"""``runbook --help`` stays light (issue 38: ≤ 0.5 s): parsing loads no pipeline, database
driver, model runtime or chat SDK. Checked in a fresh interpreter, where ``sys.modules`` shows
everything an import pulled in; the timing itself is ``bench/cli_latency.py``'s."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.test_slack_cli import REPO

# What `--help` must not import: each costs tens to hundreds of milliseconds.
HEAVY = (
    "onnxruntime",
    "fastembed",
    "tokenizers",
    "numpy",
    "psycopg",
    "psycopg_pool",
    "pydantic",
    "pydantic_settings",
    "aiohttp",
    "anthropic",
    "slack_sdk",
    "slack_bolt",
    "microsoft_agents",
)

# Prints `--help` of every command path of `runbook`, then what was imported.
_EVERY_HELP = """
import argparse, contextlib, io, json, sys
from bot.cli import build_runbook_parser, main

def paths(parser, prefix=()):
    yield prefix
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from paths(sub, (*prefix, name))

helps = {}
for path in paths(build_runbook_parser()[0]):
    with contextlib.redirect_stdout(io.StringIO()) as out:
        try:
            main([*path, "--help"])
        except SystemExit as exc:
            code = exc.code
    helps[" ".join(path)] = [code, out.getvalue()]
print(json.dumps({"helps": helps, "modules": sorted(sys.modules)}))
"""


def _run(script: str) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, check=True
    )
    loaded: dict[str, object] = json.loads(done.stdout)
    return loaded


def test_help_of_every_command_loads_no_pipeline_database_or_chat_sdk() -> None:
    run = _run(_EVERY_HELP)
    helps = run["helps"]
    assert isinstance(helps, dict)
    assert {"", "ask", "serve", "source add", "teams channel alerts", "bench"} <= set(helps)
    failed = [
        path for path, (code, text) in helps.items() if code != 0 or "usage: runbook" not in text
    ]
    assert failed == []
    modules = run["modules"]
    assert isinstance(modules, list)
    assert sorted({m.split(".")[0] for m in modules} & set(HEAVY)) == []


def test_import_rag_loads_none_of_its_modules() -> None:
    run = _run("import json, sys, rag; print(json.dumps({'modules': sorted(sys.modules)}))")
    modules = run["modules"]
    assert isinstance(modules, list)
    assert [m for m in modules if m.startswith("rag.")] == []
