"""``runbook``: the core's commands plus ``serve``, ``start``, ``ask --blocks|--teams-card``,
``teams …`` and ``bench …``.

The console script entry point (``runbook = "bot.cli:main"``); the core's parser is extended
here so ``rag`` never has to know about Slack, Teams or the benchmarks. Building the parser
imports argparse and little else (``bot.cli_parser``): each command's handler, and the pipeline,
database driver or chat SDK it needs, is imported when that command runs, so ``runbook --help``
pays for none of them and ``runbook ask`` for the pipeline alone.
"""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Callable, Coroutine, Sequence
from typing import TYPE_CHECKING, Any

from bot.cli_parser import add_bot_commands, is_channel_switch
from rag import build_parser, run_cli

if TYPE_CHECKING:
    from rag import Settings

    CommandHandler = Callable[[argparse.Namespace, Settings], Coroutine[Any, Any, int]]

# Each command of the bot → the ``module:function`` that runs it.
HANDLERS = {
    "serve": "bot.serve_cli:serve_command",
    "start": "bot.serve_cli:start_command",
    "secrets": "bot.serve_cli:secrets_command",
    "teams": "bot.teams.cli:teams_command",
    "source": "bot.sources_cli:source_command",
    "ask": "bot.ask_cli:ask_command",
    "owner": "bot.owners_cli:owner_command",
    "gaps": "bot.owners_cli:gaps_command",
    "digest": "bot.owners_cli:digest_command",
    "retention": "bot.owners_cli:retention_command",
    "audit": "bot.admin_cli:audit_command",
    "tenant": "bot.admin_cli:tenant_command",
}


def _lazy(target: str) -> CommandHandler:
    """A handler that imports ``module:function`` when its command runs."""
    module, name = target.split(":")

    async def handler(args: argparse.Namespace, settings: Settings) -> int:
        function: CommandHandler = getattr(importlib.import_module(module), name)
        return await function(args, settings)

    return handler


def build_runbook_parser() -> tuple[argparse.ArgumentParser, dict[str, CommandHandler]]:
    """The whole ``runbook`` parser, and a handler for each command the core does not run."""
    parser, commands = build_parser()
    add_bot_commands(commands)
    handlers = {command: _lazy(target) for command, target in HANDLERS.items()}
    handlers.update(_add_bench_command(commands))
    return parser, handlers


def main(argv: Sequence[str] | None = None) -> int:
    parser, handlers = build_runbook_parser()
    args = parser.parse_args(argv)  # only to choose handlers; run_cli parses again and runs
    if is_channel_switch(args):
        handlers["channel"] = _lazy("bot.channel_cli:channel_switch_command")
    return run_cli(parser, argv, handlers)


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
