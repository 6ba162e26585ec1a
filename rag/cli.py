"""The core's commands of the ``runbook`` command line (a contract kept stable for scripts).

``python -m rag`` runs these alone; the ``runbook`` console script (``bot.cli``) adds the chat
surfaces and ``runbook bench …``, which live outside the core.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import sys
from collections.abc import Callable, Coroutine, Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from rag.answering.answers import ask_result_json
from rag.errors import ConfigurationError, RunbookError
from rag.evaluation.evaluate import evaluate, load_golden
from rag.runtime import open_runtime, open_store
from rag.settings import Settings
from rag.store.embedded_server import embedded_server_status, stop_embedded_server
from rag.store.partitions import rebalance
from rag.textout import format_ask_result, format_ingest_report, format_rebalance_report
from rag.workspaces import (
    add_workspace,
    find_tenant,
    list_workspaces,
    map_channel,
    remove_workspace,
    require_tenant,
)

# What ``runbook --help`` says to the person reading it.
DESCRIPTION = """\
runbook-bot answers on-call questions from your team's runbooks, quoting them word for word.

Start with `runbook demo` (ingests the bundled example runbooks and answers a sample
question), then `runbook ingest PATH` for your own runbooks and
`runbook ask --tenant T "question"`. `runbook serve` runs the Slack and/or Teams app.
Every command takes --help.
"""

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
# As ``pg_ctl status`` says a server is not running.
EXIT_NOT_RUNNING = 3


Handler = Callable[[argparse.Namespace, Settings], Coroutine[Any, Any, int]]


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
    """Parse, read settings once, and run the command; ``handlers`` add or override commands."""
    args = parser.parse_args(argv)
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
        handler = (handlers or {}).get(args.command, _dispatch)
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


async def _dispatch(args: argparse.Namespace, settings: Settings) -> int:
    if args.command == "ingest":
        return await _ingest(args, settings)
    if args.command == "ask":
        return await _ask(args, settings)
    if args.command == "eval":
        return await _eval(args, settings)
    if args.command in ("workspace", "channel"):
        return await _workspace(args, settings)
    if args.command == "db" and args.action == "rebalance":
        return await _rebalance(args, settings)
    if args.command == "db":
        return await _embedded_db(args, settings)
    if args.command == "demo":
        from rag.demo import run_demo

        return await run_demo(settings, args.corpus)
    raise ConfigurationError(f"no handler for the {args.command!r} command")


async def _embedded_db(args: argparse.Namespace, settings: Settings) -> int:
    if settings.database_url is not None:
        print("runbook: DATABASE_URL is set; there is no embedded server to manage")
        return EXIT_OK if args.action == "status" else EXIT_USAGE
    if args.action == "stop":
        stopped = await asyncio.to_thread(stop_embedded_server, settings.pgdata)
        print(
            f"{'stopped' if stopped else 'not running:'} embedded PostgreSQL in {settings.pgdata}"
        )
        return EXIT_OK
    status = await asyncio.to_thread(embedded_server_status, settings.pgdata)
    if not status.running:
        print(f"embedded PostgreSQL in {settings.pgdata} is not running")
        return EXIT_NOT_RUNNING
    print(f"embedded PostgreSQL in {settings.pgdata} is running (pid {status.pid})")
    return EXIT_OK


async def _rebalance(args: argparse.Namespace, settings: Settings) -> int:
    min_chunks = args.min_chunks if args.min_chunks is not None else settings.partition_min_chunks
    async with open_store(settings) as store:
        report = await rebalance(
            store,
            min_chunks=min_chunks,
            exact_search_max_chunks=settings.exact_search_max_chunks,
            tenants=args.tenants,
            dry_run=args.dry_run,
        )
    print(format_rebalance_report(report, min_chunks=min_chunks, dry_run=args.dry_run))
    return EXIT_OK


async def _ingest(args: argparse.Namespace, settings: Settings) -> int:
    async with open_runtime(settings) as runtime:
        report = await runtime.ingest(
            args.path,
            tenant=args.tenant,
            prune=args.prune,
            force=args.force,
            progress=not args.json,
        )
    print(json.dumps(report.as_json()) if args.json else format_ingest_report(report))
    return EXIT_FAILED if report.failed else EXIT_OK


async def _ask(args: argparse.Namespace, settings: Settings) -> int:
    async with open_runtime(settings) as runtime:
        await require_tenant(runtime.store, args.tenant)
        result = await runtime.service.ask(
            args.tenant, " ".join(args.question), service=args.service
        )
    print(json.dumps(ask_result_json(result)) if args.json else format_ask_result(result))
    return EXIT_FAILED if result.status == "error" else EXIT_OK


async def _eval(args: argparse.Namespace, settings: Settings) -> int:
    questions = load_golden(args.golden)
    async with open_runtime(settings) as runtime:
        report = await evaluate(runtime.service, questions, k=args.k, answers=args.answers)
    if args.json:
        print(json.dumps(report))
    else:
        summary = {k: v for k, v in report.items() if k != "per_question"}
        print(json.dumps(summary, indent=2))
        for entry in report["per_question"]:
            if not entry["correct"]:
                print(f"  miss {entry['id']} ({entry['tenant']}): {entry}")
    return EXIT_OK


async def _workspace(args: argparse.Namespace, settings: Settings) -> int:
    async with open_store(settings) as store:
        if args.command == "channel":
            tenant = await find_tenant(store, team_id=args.team_id, enterprise_id=args.enterprise)
            if tenant is None:
                org = f" in enterprise {args.enterprise}" if args.enterprise else ""
                print(
                    f"runbook: workspace {args.team_id}{org} is not mapped to a tenant; "
                    "run `runbook workspace add` first (with --enterprise for Enterprise Grid)",
                    file=sys.stderr,
                )
                return EXIT_USAGE
            scope = await map_channel(store, tenant, args.team_id, args.channel_id, args.service)
            where = f"channel {scope.channel_id} in {scope.team_id} ({tenant})"
            print(f"{where} → service {scope.service}")
        elif args.action == "add":
            ws = await add_workspace(
                store, args.team_id, args.tenant, enterprise_id=args.enterprise
            )
            print(f"workspace {ws.team_id} → tenant {ws.tenant_id}")
        elif args.action == "list" and args.json:
            mapped = [
                {"team_id": w.team_id, "enterprise_id": w.enterprise_id, "tenant_id": w.tenant_id}
                for w in await list_workspaces(store)
            ]
            print(json.dumps({"workspaces": mapped}))
        elif args.action == "list":
            for ws in await list_workspaces(store):
                enterprise = f" (enterprise {ws.enterprise_id})" if ws.enterprise_id else ""
                print(f"{ws.team_id}{enterprise} → {ws.tenant_id}")
        elif not await remove_workspace(store, args.team_id, enterprise_id=args.enterprise):
            print(f"runbook: workspace {args.team_id} is not mapped", file=sys.stderr)
            return EXIT_FAILED
        else:
            print(f"workspace {args.team_id} removed")
    return EXIT_OK
