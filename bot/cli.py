"""``runbook``: the core's commands plus ``serve``, ``start`` and ``ask --blocks``.

The console script entry point (``runbook = "bot.cli:main"``); the core's parser is extended
here so ``rag`` never has to know about Slack.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote

from bot.channel_cli import add_channel_switches, channel_switch_command, is_channel_switch
from bot.core.metrics import BotMetrics
from bot.core.tasks import BackgroundTasks
from bot.server import build_web_app, run_http
from bot.slack.app import build_app
from bot.slack.blocks import Card, render_result
from bot.slack.modes import SlackMode, slack_mode
from bot.slack.routes import slack_routes
from bot.slack.socket_mode import run_socket_mode
from rag import Settings, build_parser, open_runtime, run_cli, run_demo

BUILDER_URL = "https://app.slack.com/block-kit-builder#"
EXIT_USAGE = 2


def main(argv: Sequence[str] | None = None) -> int:
    parser, commands = build_parser()
    _add_commands(commands)
    args = parser.parse_args(argv)  # only to choose handlers; run_cli parses again and runs
    handlers = {"serve": _serve_command, "start": _start_command}
    if args.command == "ask" and args.blocks:
        handlers["ask"] = _ask_blocks_command
    if is_channel_switch(args):
        handlers["channel"] = channel_switch_command
    return run_cli(parser, argv, handlers)


def _add_commands(commands: Any) -> None:
    serve = commands.add_parser("serve", help="run the Slack app (HTTP or Socket Mode)")
    start = commands.add_parser(
        "start", help="serve when Slack is configured, otherwise run the local demo"
    )
    for parser in (serve, start):
        parser.add_argument("--host", help="listen address (default: RUNBOOK_HOST)")
        parser.add_argument("--port", type=int, help="listen port (default: RUNBOOK_PORT)")
    start.add_argument("--corpus", type=Path, default=Path("corpus"), help="for the demo")
    add_channel_switches(commands)
    commands.choices["ask"].add_argument(
        "--blocks", action="store_true", help="print the Slack card's Block Kit JSON"
    )


async def _serve_command(args: argparse.Namespace, settings: Settings) -> int:
    mode = slack_mode(settings)
    if mode.kind is None:
        print(f"runbook serve: {mode.explain()}", file=sys.stderr)
        return EXIT_USAGE
    return await _serve(_listen_on(args, settings), mode)


async def _start_command(args: argparse.Namespace, settings: Settings) -> int:
    mode = slack_mode(settings)
    if mode.kind is not None:
        return await _serve(_listen_on(args, settings), mode)
    print(f"runbook start: {mode.explain()}; running the local demo instead", file=sys.stderr)
    return await run_demo(settings, args.corpus)


async def _serve(settings: Settings, mode: SlackMode) -> int:
    async with open_runtime(settings) as runtime:
        tasks, metrics = BackgroundTasks(), BotMetrics()
        app = build_app(
            settings=settings,
            service=runtime.service,
            store=runtime.store,
            client=None,
            tasks=tasks,
            metrics=metrics,
        )
        web_app = build_web_app(
            surfaces=[slack_routes(app, metrics)] if mode.kind == "http" else [],
            store=runtime.store,
            rag_metrics=runtime.service.metrics,
            bot_metrics=metrics,
        )
        if mode.kind == "socket" and settings.slack_app_token is not None:
            await run_socket_mode(
                app,
                web_app,
                app_token=settings.slack_app_token.get_secret_value(),
                host=settings.host,
                port=settings.port,
                tasks=tasks,
            )
        else:
            await run_http(web_app, host=settings.host, port=settings.port, tasks=tasks)
    return 0


async def _ask_blocks_command(args: argparse.Namespace, settings: Settings) -> int:
    question = " ".join(args.question)
    async with open_runtime(settings) as runtime:
        result = await runtime.service.ask(args.tenant, question, service=args.service)
    card = render_result(result, question=question)
    print(json.dumps({"blocks": card.blocks}, indent=2, ensure_ascii=False))
    print(f"\nPreview: {builder_url(card)}")
    return 1 if result.status == "error" else 0


def builder_url(card: Card) -> str:
    """A Block Kit Builder link that opens with this card's blocks."""
    payload = json.dumps({"blocks": card.blocks}, separators=(",", ":"), ensure_ascii=False)
    return BUILDER_URL + quote(payload, safe="")


def _listen_on(args: argparse.Namespace, settings: Settings) -> Settings:
    overrides = {"host": args.host, "port": args.port}
    return settings.model_copy(update={k: v for k, v in overrides.items() if v is not None})
