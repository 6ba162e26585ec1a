"""``runbook serve``, ``runbook start`` and ``runbook secrets``: the chat surfaces in their
roles (``bot.serve_roles``, ``bot.supervisor``), and the keys for tokens at rest.

Imported only by those commands (``bot.cli`` names them lazily): the Slack and Teams SDKs, the
aiohttp server and the job queue are most of a command's start-up time.
"""

from __future__ import annotations

import argparse
import logging
import sys

from bot.core.secret_reseal import SOURCE_SECRETS, reseal_secrets
from bot.core.token_cipher import TokenCipher, generate_key
from bot.serve_roles import serve_web, serve_worker
from bot.slack.modes import SlackMode, slack_mode
from bot.slack.reseal import SLACK_SECRETS
from bot.supervisor import follow_parent, supervise
from bot.teams.config import TeamsMode, is_loopback, teams_mode
from bot.teams.graph.config import graph_alerts_problem
from bot.teams.graph.subscriptions import GRAPH_SECRETS
from rag import Settings, open_store, run_demo

logger = logging.getLogger(__name__)

EXIT_USAGE = 2


async def serve_command(args: argparse.Namespace, settings: Settings) -> int:
    settings = _listen_on(args, settings)
    slack, teams = slack_mode(settings), teams_mode(settings)
    if slack.kind is None and teams.kind is None:
        print(f"runbook serve: {slack.explain()}; {teams.explain()}", file=sys.stderr)
        return EXIT_USAGE
    problem = _surface_problem(settings, slack, teams)
    if problem:
        print(f"runbook serve: {problem}", file=sys.stderr)
        return EXIT_USAGE
    if args.slot is not None:
        follow_parent()
    if args.role == "web":
        return await serve_web(settings, slack, teams)
    if args.role == "worker":
        return await serve_worker(settings, slack, teams, slot=args.slot)
    return await supervise(settings)


async def start_command(args: argparse.Namespace, settings: Settings) -> int:
    settings = _listen_on(args, settings)
    slack, teams = slack_mode(settings), teams_mode(settings)
    problem = _surface_problem(settings, slack, teams)
    if problem:
        # Half a setup is a mistake to fix, not a wish for the demo.
        print(
            f"runbook start: {problem}; set the rest, or unset every SLACK_* and TEAMS_* "
            "variable to run the local demo",
            file=sys.stderr,
        )
        return EXIT_USAGE
    if slack.kind is not None or teams.kind is not None:
        return await supervise(settings)
    print(f"runbook start: {slack.explain()}; running the local demo instead", file=sys.stderr)
    return await run_demo(settings, args.corpus)


def _surface_problem(settings: Settings, slack: SlackMode, teams: TeamsMode) -> str | None:
    """Why serving would be wrong: a half-configured surface (silently skipping it would look
    like a bot that ignores its users), or the local Teams mode on a reachable address or beside
    a production registration."""
    if slack.partly_configured:
        return slack.explain()
    if teams.partly_configured or teams.conflicting:
        return teams.explain()
    if teams.kind == "local" and not is_loopback(settings.host):
        return (
            f"TEAMS_ALLOW_UNAUTHENTICATED=true accepts activities without a token, so it only "
            f"listens on a loopback address (127.0.0.1, ::1), not {settings.host!r}"
        )
    return graph_alerts_problem(settings, teams)


async def secrets_command(args: argparse.Namespace, settings: Settings) -> int:
    if args.action == "generate-key":
        print(generate_key())
        return 0
    cipher = TokenCipher.from_setting(
        settings.encryption_keys,
        sealing="Stored secrets (Slack tokens, source credentials, Graph client states)",
    )
    async with open_store(settings) as store:
        report = await reseal_secrets(
            store, cipher, (*SOURCE_SECRETS, *SLACK_SECRETS, *GRAPH_SECRETS)
        )
    print(
        f"re-encrypted {report.resealed} stored secret(s) with the first key "
        "(Slack tokens, source credentials and webhook secrets, Graph clientStates)"
    )
    for unreadable in report.unreadable:
        print(
            f"cannot open the {unreadable}: no key in RUNBOOK_ENCRYPTION_KEYS opens it",
            file=sys.stderr,
        )
    if report.unreadable:
        print(
            "put the key they were sealed with back in RUNBOOK_ENCRYPTION_KEYS (after the first) "
            "and run this again before dropping any key",
            file=sys.stderr,
        )
        return 1
    return 0


def _listen_on(args: argparse.Namespace, settings: Settings) -> Settings:
    """Settings for serving: the command line's address, one ONNX thread unless configured."""
    overrides = {"host": args.host, "port": args.port}
    serving = settings.serving()
    return serving.model_copy(update={k: v for k, v in overrides.items() if v is not None})
