"""``runbook source add|list|sync|remove``: a tenant's git repositories and Confluence spaces.

A credential is read from the environment variable named at ``add`` time and stored sealed
(``RUNBOOK_ENCRYPTION_KEYS``); it is never printed or logged. ``add`` prints the source's push
webhook URL and secret.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import secrets
import shutil
import sys
from pathlib import Path
from typing import Any

from bot.core.sources.runs import SyncOutcome, cipher_or_none, run_sync
from bot.core.sources.status import describe_source
from bot.core.token_cipher import KEYS_SETTING, TokenCipher
from rag import (
    ConfigurationError,
    GitCredential,
    GitSourceSettings,
    Settings,
    SourceAccess,
    SourceRow,
    SourceSyncError,
    add_source,
    git_target,
    list_sources,
    open_runtime,
    open_store,
    remote_default_branch,
    remote_has_folder,
    remove_source,
)

EXIT_OK, EXIT_FAILED = 0, 1
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$")


async def source_command(args: argparse.Namespace, settings: Settings) -> int:
    if args.action == "add":
        return await _add(args, settings)
    if args.action == "list":
        return await _list(args, settings)
    if args.action == "sync":
        return await _sync(args, settings)
    return await _remove(args, settings)


def _source_settings(args: argparse.Namespace) -> tuple[dict[str, Any], dict[str, str] | None]:
    """The kind's settings and its credential (plaintext, to be sealed) from the arguments."""
    if args.kind == "git":
        _refuse(args, ("space", "label", "email", "pat_env"), "git")
        if args.token_env and args.ssh_key_file:
            raise ConfigurationError("pass --token-env or --ssh-key-file, not both")
        credential = None
        if args.token_env:
            credential = {"token": _from_env(args.token_env)}
        elif args.ssh_key_file:
            credential = {"ssh_key": _read_key(args.ssh_key_file)}
        # Without --branch, `_add` asks the remote for its default branch once all else is checked.
        checked = _git_settings(args.url, args.branch or "main", args.path, args)
        return checked.model_dump(exclude_none=True), credential
    _refuse(args, ("branch", "path", "ssh_key_file", "forge", "api_url"), "confluence")
    if not args.space:
        raise ConfigurationError("a confluence source needs --space KEY")
    if bool(args.email) == bool(args.pat_env) or bool(args.email) != bool(args.token_env):
        raise ConfigurationError(
            "a confluence source needs --email E --token-env VAR (Cloud) or --pat-env VAR "
            "(Data Center)"
        )
    base_url = args.url.rstrip("/")
    if not base_url.startswith(("https://", "http://")):
        raise ConfigurationError("the confluence BASE_URL must start with https://")
    settings: dict[str, Any] = {"base_url": base_url, "space": args.space, "label": args.label}
    if args.email:
        settings["email"] = args.email
        return settings, {"token": _from_env(args.token_env)}
    return settings, {"pat": _from_env(args.pat_env)}


def _git_settings(
    url: str, branch: str, path: str | None, args: argparse.Namespace
) -> GitSourceSettings:
    forge = {"forge": args.forge, "api_url": args.api_url}
    try:
        return GitSourceSettings(url=url, branch=branch, path=path or "", **forge)
    except ValueError as exc:
        raise ConfigurationError(f"invalid git source: {_first_error(exc)}") from exc


def _check_reach(kind: str, name: str, url: str, settings: Settings) -> None:
    """Refuse a URL sources may not reach (loopback, private, link-local, internal names,
    plain http, file://), naming the operator setting that allows it. A name that does not
    resolve here yet passes: every connection checks the address it reaches."""
    access = SourceAccess.from_settings(settings)
    try:
        if kind == "git":
            git_target(name, url, access)
        else:
            access.check_http_url(name, url)
    except SourceSyncError as exc:
        if exc.code != "source_unreachable":
            raise ConfigurationError(f"source {name!r}: {exc.reason}") from exc


def _refuse(args: argparse.Namespace, options: tuple[str, ...], kind: str) -> None:
    given = [o for o in options if getattr(args, o)]
    if given:
        flags = ", ".join("--" + o.replace("_", "-") for o in given)
        raise ConfigurationError(f"{flags} do not apply to a {kind} source")


def _from_env(variable: str) -> str:
    value = os.environ.get(variable, "").strip()
    if not value:
        raise ConfigurationError(f"environment variable {variable} is not set (or empty)")
    return value


def _read_key(path: Path) -> str:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigurationError(f"cannot read the deploy key {path}") from exc
    if "PRIVATE KEY" not in text:
        raise ConfigurationError(f"{path} does not hold a private key")
    return text


def _first_error(exc: ValueError) -> str:
    errors = getattr(exc, "errors", None)
    if callable(errors):
        first = errors()[0]
        return f"{first['loc'][0]}: {str(first['msg']).removeprefix('Value error, ')}"
    return str(exc)


def _default_name(args: argparse.Namespace) -> str:
    if args.kind == "confluence":
        return str(args.space).lower()
    tail = args.url.rstrip("/").rsplit("/", 1)[-1].rsplit(":", 1)[-1]
    name = re.sub(r"[^A-Za-z0-9_.-]", "-", tail.removesuffix(".git")).strip("-.") or "git"
    return name[:63]


def webhook_url(settings: Settings, row: SourceRow) -> str:
    base = (settings.public_url or f"http://{settings.host}:{settings.port}").rstrip("/")
    return f"{base}/hooks/git/{row.source_id}"


def _seal(cipher: TokenCipher | None, value: dict[str, str]) -> dict[str, str]:
    return value if cipher is None else cipher.seal(value)


async def _add(args: argparse.Namespace, settings: Settings) -> int:
    source_settings, credential = _source_settings(args)
    name = args.name or _default_name(args)
    if not _NAME.fullmatch(name):
        raise ConfigurationError(f"source name {name!r}: 1-63 letters, digits, '.', '_' or '-'")
    _check_reach(args.kind, name, args.url, settings)
    if getattr(args, "api_url", None):
        # Drafted runbooks are sent to the forge's API with the source's token: the same rule.
        _check_reach("forge", name, args.api_url, settings)
    cipher = cipher_or_none(settings)
    if credential is not None and cipher is None:
        raise ConfigurationError(
            f"a source with a credential needs {KEYS_SETTING} (credentials are stored sealed); "
            "generate a key with `runbook secrets generate-key`"
        )
    if args.kind == "git" and args.branch is None:
        # The URL is checked by now: ls-remote runs only over the transports sources allow.
        branch = await asyncio.to_thread(
            remote_default_branch,
            name,
            args.url,
            GitCredential(**(credential or {})),
            access=SourceAccess.from_settings(settings),
        )
        source_settings = _git_settings(args.url, branch, args.path, args).model_dump(
            exclude_none=True
        )
    if args.kind == "git" and source_settings.get("path"):
        await _require_folder(
            name, source_settings, credential, access=SourceAccess.from_settings(settings)
        )
    secret = secrets.token_urlsafe(32)
    async with open_store(settings) as store:
        row = await add_source(
            store,
            tenant=args.tenant,
            name=name,
            kind=args.kind,
            settings=source_settings,
            credential=None if credential is None or cipher is None else cipher.seal(credential),
            webhook_secret=_seal(cipher, {"secret": secret}),
        )
    hook = webhook_url(settings, row)
    if args.json:
        print(
            json.dumps(
                {
                    **row.summary(),
                    "webhook_url": hook,
                    "webhook_secret": secret,
                }
            )
        )
        return EXIT_OK
    print(f"added {args.kind} source {name!r} for tenant {args.tenant!r} ({row.source_id})")
    print(f"  webhook URL:    {hook}")
    print(f"  webhook secret: {secret}")
    if settings.public_url is None:
        print("  (set RUNBOOK_PUBLIC_URL to the address the internet reaches RUNBOOK_PORT at)")
    print(f"  sync it now:    runbook source sync --tenant {args.tenant} --name {name}")
    return EXIT_OK


async def _require_folder(
    name: str,
    source_settings: dict[str, Any],
    credential: dict[str, str] | None,
    *,
    access: SourceAccess,
) -> None:
    """Refuse (saving nothing) a ``--path`` the branch does not have: it would sync nothing."""
    url, branch, folder = (source_settings[k] for k in ("url", "branch", "path"))
    found = await asyncio.to_thread(
        remote_has_folder,
        name,
        url,
        branch,
        folder,
        GitCredential(**(credential or {})),
        access=access,
    )
    if not found:
        raise ConfigurationError(
            f"--path {folder!r} is not a folder of {url} on branch {branch!r}; nothing was "
            "saved (the path is relative to the repository's root)"
        )


async def _list(args: argparse.Namespace, settings: Settings) -> int:
    async with open_store(settings) as store:
        rows = await list_sources(store, tenant=args.tenant)
    if args.json:
        print(json.dumps({"sources": [row.summary() for row in rows]}))
        return EXIT_OK
    if not rows:
        print("no sources")
    for row in rows:
        print("\n".join(describe_source(row)))
    return EXIT_OK


async def _sync(args: argparse.Namespace, settings: Settings) -> int:
    cipher = cipher_or_none(settings)
    outcomes: list[SyncOutcome] = []
    async with open_runtime(settings) as runtime:
        rows = await list_sources(runtime.store, tenant=args.tenant, name=args.name)
        if not rows:
            raise ConfigurationError("no source matches; see `runbook source list`")
        for row in rows:
            outcomes.append(
                await run_sync(
                    runtime.store,
                    runtime.embedder,
                    row,
                    settings=settings,
                    cipher=cipher,
                    force=args.force,
                )
            )
    ok = all(outcome.synced for outcome in outcomes)
    if args.json:
        print(json.dumps({"ok": ok, "sources": [o.as_json() for o in outcomes]}))
    else:
        for outcome in outcomes:
            label = f"{outcome.source.tenant_id}/{outcome.source.name}"
            if outcome.report is None:
                print(f"{label}: FAILED: {outcome.error}", file=sys.stderr)
                continue
            r = outcome.report
            print(
                f"{label}: synced {r.version[:12] or '-'}: {r.added} added, {r.changed} changed, "
                f"{r.unchanged} unchanged, {r.retired} retired, {len(r.skipped)} skipped, "
                f"{len(r.failed)} failed, {r.chunks_written} chunks in {r.seconds:.1f}s"
            )
            for failure in r.failed:
                print(f"  failed {failure.path}: {failure.reason}", file=sys.stderr)
    return EXIT_OK if ok else EXIT_FAILED


async def _remove(args: argparse.Namespace, settings: Settings) -> int:
    async with open_store(settings) as store:
        rows = await list_sources(store, tenant=args.tenant, name=args.name)
        if not rows:
            raise ConfigurationError(f"tenant {args.tenant!r} has no source named {args.name!r}")
        retired = await remove_source(store, rows[0], prune=args.prune)
    shutil.rmtree(settings.data_dir / "sources" / str(rows[0].source_id), ignore_errors=True)
    print(f"removed source {args.name!r} of {args.tenant!r}; {retired} documents retired")
    return EXIT_OK
