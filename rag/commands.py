"""What each of the core's ``runbook`` commands does, once ``rag.cli`` has parsed it and read the
settings; imported only then, so the parser and ``--help`` never load the pipeline."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys

from rag.answering.answers import ask_result_json
from rag.errors import ConfigurationError
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
    unmapped_workspace,
)

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
# As ``pg_ctl status`` says a server is not running.
EXIT_NOT_RUNNING = 3


async def run_command(args: argparse.Namespace, settings: Settings) -> int:
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
                print(
                    f"runbook: {unmapped_workspace(args.team_id, args.enterprise)}", file=sys.stderr
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
