"""``runbook``: the core's commands plus ``serve``, ``start``, ``ask --blocks|--teams-card``,
``teams …`` and ``bench …``.

The console script entry point (``runbook = "bot.cli:main"``); the core's parser is extended
here so ``rag`` never has to know about Slack, Teams or the benchmarks. Building the parser
imports no chat SDK: each command's handler (and what it needs) is imported when that command
runs, so ``runbook --help`` and ``runbook ask`` do not pay for the Slack, Teams and HTTP stacks.
"""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Callable, Coroutine, Sequence
from pathlib import Path
from typing import Any

from bot.admin_cli import HANDLERS as ADMIN_HANDLERS
from bot.admin_cli import add_admin_commands
from bot.ask_cli import add_ask_options
from bot.channel_cli import add_channel_switches, is_channel_switch
from bot.owners_cli import HANDLERS as OWNER_HANDLERS
from bot.owners_cli import add_owner_commands
from bot.sources_cli import add_source_commands
from bot.teams.cli import add_teams_commands
from rag import Settings, build_parser, run_cli

CommandHandler = Callable[[argparse.Namespace, Settings], Coroutine[Any, Any, int]]


def _lazy(target: str) -> CommandHandler:
    """A handler that imports ``module:function`` when its command runs."""
    module, name = target.split(":")

    async def handler(args: argparse.Namespace, settings: Settings) -> int:
        function: CommandHandler = getattr(importlib.import_module(module), name)
        return await function(args, settings)

    return handler


def main(argv: Sequence[str] | None = None) -> int:
    parser, commands = build_parser()
    _add_commands(commands)
    bench_handlers = _add_bench_command(commands)
    args = parser.parse_args(argv)  # only to choose handlers; run_cli parses again and runs
    handlers: dict[str, CommandHandler] = {
        "serve": _lazy("bot.serve_cli:serve_command"),
        "start": _lazy("bot.serve_cli:start_command"),
        "secrets": _lazy("bot.serve_cli:secrets_command"),
        "teams": _lazy("bot.teams.cli:teams_command"),
        "source": _lazy("bot.sources_cli:source_command"),
        "ask": _lazy("bot.ask_cli:ask_command"),
        **OWNER_HANDLERS,
        **ADMIN_HANDLERS,
        **bench_handlers,
    }
    if is_channel_switch(args):
        handlers["channel"] = _lazy("bot.channel_cli:channel_switch_command")
    return run_cli(parser, argv, handlers)


def _add_commands(commands: Any) -> None:
    add_owner_commands(commands)
    add_admin_commands(commands)
    add_source_commands(commands)
    serve = commands.add_parser(
        "serve", help="run the Slack app (HTTP or Socket Mode) and/or the Teams app"
    )
    start = commands.add_parser(
        "start",
        help="serve when Slack or Teams is configured, run the local demo when neither is "
        "(a partial configuration is an error)",
    )
    for parser in (serve, start):
        parser.add_argument("--host", help="listen address (default: RUNBOOK_HOST)")
        parser.add_argument("--port", type=int, help="listen port (default: RUNBOOK_PORT)")
    serve.add_argument(
        "--role",
        choices=("web", "worker", "all"),
        default="all",
        help="web: verify, dedupe, queue and ack; worker: run the queued jobs; all (default): "
        "one web process and RUNBOOK_WORKERS workers, supervised",
    )
    # A child of `--role all` is told its place; nobody else passes it.
    serve.add_argument("--slot", type=int, help=argparse.SUPPRESS)
    start.add_argument("--corpus", type=Path, default=Path("corpus"), help="for the demo")
    secrets = commands.add_parser("secrets", help="encryption keys for secrets at rest")
    secrets_actions = secrets.add_subparsers(dest="action", required=True)
    secrets_actions.add_parser("generate-key", help="print a new key for RUNBOOK_ENCRYPTION_KEYS")
    secrets_actions.add_parser(
        "reencrypt", help="re-seal every stored secret with the first key (after a rotation)"
    )
    add_channel_switches(commands)
    add_ask_options(commands)
    add_teams_commands(commands)


def _add_bench_command(commands: Any) -> dict[str, CommandHandler]:
    """``runbook bench …`` where the benchmarks are installed: from a clone or a wheel, but not
    in the container image, which ships rag/ and bot/ only."""
    try:
        from bench.cli import add_bench_command, bench_command
    except ModuleNotFoundError as exc:
        if exc.name != "bench":
            raise
        return {}
    add_bench_command(commands)
    return {"bench": bench_command}
