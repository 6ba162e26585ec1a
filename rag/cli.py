"""The core's commands of the ``runbook`` command line (a contract kept stable for scripts).

``python -m rag`` runs these alone; the ``runbook`` console script (``bot.cli``) adds the chat
surfaces and ``runbook bench …``, which live outside the core.
"""

from __future__ import annotations

import argparse
import asyncio
import atexit
import gc
import logging
import os
import sys
from collections.abc import Callable, Coroutine, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rag.errors import ConfigurationError, RunbookError

if TYPE_CHECKING:
    from rag.settings import Settings

    Handler = Callable[[argparse.Namespace, Settings], Coroutine[Any, Any, int]]

# What ``runbook --help`` says to the person reading it.
DESCRIPTION = """\
runbook-bot answers on-call questions from your team's runbooks, quoting them word for word.

Start with `runbook demo` (ingests the bundled example runbooks and answers a sample
question), then `runbook ingest PATH` for your own runbooks and
`runbook ask --tenant T "question"`. `runbook serve` runs the Slack and/or Teams app.
Every command takes --help.
"""

EXIT_FAILED, EXIT_USAGE = 1, 2


def build_parser() -> tuple[argparse.ArgumentParser, Any]:
    """The parser and its subcommand action, so a front end (``bot.cli``) can add commands."""
    parser = argparse.ArgumentParser(
        prog="runbook",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="log at INFO")
    commands = parser.add_subparsers(dest="command", required=True)

    ingest = commands.add_parser("ingest", help="ingest runbooks (each subfolder is a tenant)")
    ingest.add_argument("path", type=Path)
    ingest.add_argument("--tenant", help="ingest PATH itself as this tenant")
    ingest.add_argument(
        "--prune", action="store_true", help="retire documents whose files are gone"
    )
    ingest.add_argument(
        "--force",
        action="store_true",
        help="let --prune retire more than half of a tenant's documents (refused otherwise)",
    )
    ingest.add_argument("--json", action="store_true", help="print one JSON summary object")

    ask = commands.add_parser("ask", help="answer a question from one tenant's runbooks")
    ask.add_argument(
        "--tenant", required=True, help="whose runbooks to search (a folder name under ingest)"
    )
    ask.add_argument("--service", help="scope hint: prefer this service's runbooks")
    ask.add_argument(
        "--json", action="store_true", help="print one JSON object (status, answer, citations)"
    )
    ask.add_argument("question", nargs="+", help="the question, as you would ask it in chat")

    ev = commands.add_parser("eval", help="score retrieval and the gate on a golden set")
    ev.add_argument("--golden", type=Path, required=True)
    ev.add_argument("--k", type=int, default=5)
    ev.add_argument("--json", action="store_true")
    ev.add_argument(
        "--answers",
        action="store_true",
        help="also run the full answer path and score its citations",
    )

    workspace = commands.add_parser("workspace", help="map chat workspaces to tenants")
    ws = workspace.add_subparsers(dest="action", required=True)
    ws_add = ws.add_parser("add")
    ws_add.add_argument("team_id")
    ws_add.add_argument("tenant")
    ws_add.add_argument("--enterprise", default="")
    ws_list = ws.add_parser("list")
    ws_list.add_argument("--json", action="store_true", help="print one JSON object")
    ws_remove = ws.add_parser("remove")
    ws_remove.add_argument("team_id")
    ws_remove.add_argument("--enterprise", default="")

    channel = commands.add_parser("channel", help="scope a channel to a service")
    ch = channel.add_subparsers(dest="action", required=True)
    ch_map = ch.add_parser("map")
    ch_map.add_argument("team_id")
    ch_map.add_argument("channel_id")
    ch_map.add_argument("service")
    ch_map.add_argument("--enterprise", default="", help="Enterprise Grid org id (E…)")

    db = commands.add_parser("db", help="the embedded PostgreSQL (when DATABASE_URL is unset)")
    db_actions = db.add_subparsers(dest="action", required=True)
    db_actions.add_parser("status", help="say whether it runs (exit 3 when it does not)")
    db_actions.add_parser("stop", help="stop it; every other command leaves it running")
    rebalance = db_actions.add_parser(
        "rebalance",
        help="move tenants across the partition threshold (own partition above, shared below "
        "half of it)",
    )
    rebalance.add_argument(
        "--tenant",
        action="append",
        dest="tenants",
        metavar="T",
        help="only this tenant (repeatable)",
    )
    rebalance.add_argument(
        "--min-chunks",
        type=int,
        metavar="N",
        help="threshold (default: RUNBOOK_PARTITION_MIN_CHUNKS)",
    )
    rebalance.add_argument("--dry-run", action="store_true", help="say what would move")

    demo = commands.add_parser(
        "demo", help="ingest corpus/ and answer a sample question per tenant"
    )
    demo.add_argument("--corpus", type=Path, default=Path("corpus"))

    return parser, commands


def main(argv: Sequence[str] | None = None) -> int:
    parser, _ = build_parser()
    return run_cli(parser, argv)


def run_cli(
    parser: argparse.ArgumentParser,
    argv: Sequence[str] | None = None,
    handlers: Mapping[str, Handler] | None = None,
) -> int:
    """Parse, read settings once, and run the command; ``handlers`` add or override commands.

    The settings (pydantic) and the core's handlers are imported after parsing: ``--help`` and a
    usage error never pay for them.
    """
    args = parser.parse_args(argv)
    _skip_collection_at_exit()
    from pydantic import ValidationError

    from rag.settings import Settings

    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    try:
        settings = Settings()
    except ValidationError as exc:
        first = exc.errors()[0]
        print(f"runbook: invalid setting {first['loc'][0]}: {first['msg']}", file=sys.stderr)
        return EXIT_USAGE
    try:
        handler = (handlers or {}).get(args.command)
        if handler is None:
            from rag.commands import run_command

            handler = run_command
        return asyncio.run(handler(args, settings))
    except RunbookError as exc:
        print(f"runbook: {exc} [{exc.code}]", file=sys.stderr)
        return EXIT_USAGE if isinstance(exc, ConfigurationError) else EXIT_FAILED
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # The reader left (``runbook ask … | head``): what it read was the output; no traceback.
        # Python would report the pipe again flushing stdout at exit, so point it at nothing.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


def _skip_collection_at_exit() -> None:
    """At interpreter exit, spare the collector its walk over every object the command imported
    (0.1 s of CPU after ``runbook ask``, issue 38): the process ends, and with it its memory."""
    atexit.unregister(gc.freeze)  # registered once, however often a test calls ``run_cli``
    atexit.register(gc.freeze)
