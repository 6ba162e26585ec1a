"""The grammar of the bot's ``runbook`` commands (chat surfaces, owners, sources, serve), added by
``bot.cli`` to the core's parser.

Argparse and the standard library only: ``runbook --help`` and a usage error load no pipeline,
database driver or chat SDK (issue 38: ``--help`` in ≤ 0.5 s). What a command does lives in its
handler module (``bot.*_cli``, ``bot.teams.cli``), which ``bot.cli`` imports when it runs.
"""

from __future__ import annotations

import argparse
import re
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from bot.core.alerts.channel_settings import Switch


def add_bot_commands(commands: Any) -> None:
    """Add the bot's commands to the subcommand action of ``rag.build_parser()``."""
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


_SINCE = re.compile(r"^(\d{1,4})([hdw])$")
_UNITS = {"h": "hours", "d": "days", "w": "weeks"}


def parse_since(text: str) -> timedelta:
    """``7d``, ``48h``, ``2w`` → a timedelta (an argparse ``type``)."""
    match = _SINCE.match(text.strip())
    if match is None or int(match.group(1)) == 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a period like 7d, 48h or 2w")
    return timedelta(**{_UNITS[match.group(2)]: int(match.group(1))})


def add_owner_commands(commands: Any) -> None:
    owner = commands.add_parser("owner", help="route 👎 feedback to runbook owners")
    actions = owner.add_subparsers(dest="action", required=True)
    targets = (
        "Slack: U… user, S… user group, C… channel or #channel; Teams: 19:…@thread.tacv2 "
        "channel (one target per surface; a vote goes to its own surface's)"
    )
    mapping = actions.add_parser("map", help="frontmatter owner NAME → chat TARGET")
    mapping.add_argument("tenant")
    mapping.add_argument("name")
    mapping.add_argument("target", help=targets)
    fallback = actions.add_parser("default", help="where feedback goes without an owner")
    fallback.add_argument("tenant")
    fallback.add_argument("target", help=targets)
    listing = actions.add_parser("list")
    listing.add_argument("tenant")

    gaps = commands.add_parser("gaps", help="unanswered topics, 👎 runbooks, stale runbooks")
    gaps.add_argument("--tenant", required=True)
    gaps.add_argument("--since", type=parse_since, default=timedelta(days=7))
    gaps.add_argument("--json", action="store_true", help="print one JSON object")
    gaps.add_argument("--html", type=Path, help="also write a self-contained HTML page")
    gaps.add_argument("--owner", help="only this owner's rows (owner name or Slack target)")
    gaps.add_argument("--draft", metavar="GAP_ID", help="print a runbook skeleton for one gap")

    digest = commands.add_parser(
        "digest", help="send each owner their gaps and runbooks (or one post to --channel)"
    )
    digest.add_argument("--tenant", required=True)
    digest.add_argument("--channel", help="post the whole tenant's digest here instead")
    digest.add_argument("--since", type=parse_since, default=timedelta(days=7))

    retention = commands.add_parser("retention", help="text retention")
    retention_actions = retention.add_subparsers(dest="action", required=True)
    purge = retention_actions.add_parser("purge", help="remove text past RUNBOOK_RETAIN_TEXT_DAYS")
    purge.add_argument("--json", action="store_true")


def add_admin_commands(commands: Any) -> None:
    audit = commands.add_parser("audit", help="a tenant's settings changes: who, what, when")
    audit.add_argument("--tenant", required=True)
    audit.add_argument("--limit", type=int, default=None, help="only the newest N changes")
    audit.add_argument("--json", action="store_true", help="print one JSON object")
    tenant = commands.add_parser("tenant", help="delete a tenant and all it owns")
    actions = tenant.add_subparsers(dest="action", required=True)
    delete = actions.add_parser("delete", help="delete at once: runbooks, sources, settings")
    delete.add_argument("tenant")
    delete.add_argument("--yes", action="store_true", help="confirm; nothing is deleted without")


def add_source_commands(commands: Any) -> None:
    source = commands.add_parser("source", help="sync a tenant's runbooks from git or Confluence")
    actions = source.add_subparsers(dest="action", required=True)
    add = actions.add_parser("add", help="add a git repository or a Confluence space")
    add.add_argument("tenant")
    add.add_argument("kind", choices=("git", "confluence"))
    add.add_argument("url", help="git: clone URL; confluence: the base URL users see")
    add.add_argument("--branch", help="git: the branch to sync (default: the remote's HEAD)")
    add.add_argument("--path", help="git: only this folder of the repository")
    add.add_argument("--token-env", help="git: https token | confluence: API token (with --email)")
    add.add_argument("--ssh-key-file", type=Path, help="git: a deploy key for ssh URLs")
    add.add_argument(
        "--forge",
        choices=("github", "gitlab"),
        help="git: where drafted runbooks go as pull/merge requests (default: from the host)",
    )
    add.add_argument("--api-url", help="git: the forge's API base, e.g. https://HOST/api/v3")
    add.add_argument("--space", help="confluence: the space key")
    add.add_argument("--label", help="confluence: only pages with this label")
    add.add_argument("--email", help="confluence Cloud: the account of the API token")
    add.add_argument("--pat-env", help="confluence Data Center: a personal access token")
    add.add_argument("--name", help="unique within the tenant (default: from the URL or space)")
    add.add_argument("--json", action="store_true", help="print one JSON object")
    listing = actions.add_parser("list", help="sources with their last sync")
    listing.add_argument("--tenant")
    listing.add_argument("--json", action="store_true", help="print one JSON object")
    sync = actions.add_parser("sync", help="sync sources now (exit 0 only if all synced)")
    sync.add_argument("--tenant")
    sync.add_argument("--name")
    sync.add_argument("--force", action="store_true", help="retire even most of a tenant")
    sync.add_argument("--json", action="store_true", help="print one JSON object")
    remove = actions.add_parser("remove", help="forget a source")
    remove.add_argument("tenant")
    remove.add_argument("name")
    remove.add_argument("--prune", action="store_true", help="also retire its documents")


# CLI action → stored switch, and what it does (the help text).
SWITCHES: dict[str, tuple[Switch, str]] = {
    "alerts": ("alerts", "answer new alert posts in the channel's threads (default off)"),
    "follow-ups": (
        "follow_ups",
        "answer follow-up questions in threads the bot answered, without a mention (default off)",
    ),
}


def add_channel_switches(commands: Any) -> None:
    """Add the switches to the ``channel`` command's subcommands (beside ``map``)."""
    channel: argparse.ArgumentParser = commands.choices["channel"]
    actions = next(a for a in channel._actions if isinstance(a, argparse._SubParsersAction))
    for name, (_, help_text) in SWITCHES.items():
        parser = actions.add_parser(name, help=help_text)
        parser.add_argument("team_id")
        parser.add_argument("channel_id")
        parser.add_argument("state", choices=["on", "off"])
        parser.add_argument("--enterprise", default="", help="Enterprise Grid org id (E…)")


def is_channel_switch(args: argparse.Namespace) -> bool:
    return args.command == "channel" and args.action in SWITCHES


def add_ask_options(commands: Any) -> None:
    ask = commands.choices["ask"]
    ask.add_argument("--blocks", action="store_true", help="print the Slack card's Block Kit JSON")
    ask.add_argument(
        "--no-record",
        action="store_true",
        help="do not record this ask (by default it is kept like a chat answer, so "
        "`runbook gaps` counts it)",
    )


def add_teams_commands(commands: Any) -> None:
    teams = commands.add_parser("teams", help="Microsoft Teams: tenants, channels, app package")
    sub = teams.add_subparsers(dest="teams_command", required=True)

    tenant = sub.add_parser("tenant", help="allow a Teams organisation (AAD tenant)")
    tenant_sub = tenant.add_subparsers(dest="action", required=True)
    add = tenant_sub.add_parser("add", help="map an AAD tenant to a tenant")
    add.add_argument("aad_tenant_id")
    add.add_argument("tenant")
    tenant_sub.add_parser("list")
    remove = tenant_sub.add_parser("remove")
    remove.add_argument("aad_tenant_id")

    channel = sub.add_parser(
        "channel", help="a Teams channel: its service, alert answers and thread follow-ups"
    )
    channel_sub = channel.add_subparsers(dest="action", required=True)
    channel_map = channel_sub.add_parser("map")
    channel_map.add_argument("aad_tenant_id")
    channel_map.add_argument("channel_id", help="e.g. 19:abc…@thread.tacv2")
    channel_map.add_argument("service")
    add_channel_switch_commands(channel_sub)

    package = sub.add_parser("package", help="write the Teams app package (zip)")
    package.add_argument("--app-id", required=True, help="the Azure bot's Microsoft App ID")
    package.add_argument("--host", required=True, help="public host serving /api/messages")
    package.add_argument("--out", type=Path, default=Path("runbook-bot-teams.zip"))

    commands.choices["ask"].add_argument(
        "--teams-card", action="store_true", help="print the Teams card's Adaptive Card JSON"
    )


def add_channel_switch_commands(channel_sub: Any) -> None:
    """``alerts``, ``follow-ups`` and ``list`` beside ``teams channel map``."""
    for name, (_, help_text) in SWITCHES.items():
        parser = channel_sub.add_parser(name, help=help_text)
        parser.add_argument("aad_tenant_id")
        parser.add_argument("channel_id", help="e.g. 19:abc…@thread.tacv2")
        parser.add_argument("state", choices=["on", "off"])
        parser.add_argument("--json", action="store_true", help="print the channel as JSON")
        if name == "alerts":
            parser.add_argument(
                "--team",
                help="the team's AAD group id (groupId= of the channel's link): with "
                "TEAMS_GRAPH_ALERTS, alert posts by apps also come through Microsoft Graph",
            )
    listing = channel_sub.add_parser("list", help="channels with alerts or follow-ups set")
    listing.add_argument("aad_tenant_id")
    listing.add_argument("--json", action="store_true", help="one JSON object per line")


def is_teams_channel_switch(args: argparse.Namespace) -> bool:
    return args.teams_command == "channel" and (args.action in SWITCHES or args.action == "list")
