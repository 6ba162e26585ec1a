"""Adding a source from a form (Slack modal, Teams card): the fields checked, the network rules
applied, the source tested before anything is stored, the credential sealed at once, and one
submission stored once however often it is sent.

Errors come back per field (``FieldErrors``), so a surface shows each next to its input; the
credential never appears in a message, a log line or the audit log.
"""

from __future__ import annotations

import asyncio
import re
import secrets
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict, SecretStr

from bot.core.admin.admins import Actor, is_admin
from bot.core.admin.audit import record_change
from bot.core.admin.changes import NOT_ADMIN, Outcome, refused
from bot.core.admin.source_network import url_problem
from bot.core.token_cipher import TokenCipher
from rag import (
    ConfigurationError,
    GitCredential,
    GitSourceSettings,
    RunbookError,
    SourceAccess,
    Store,
    add_source,
    confluence_reader,
    remote_default_branch,
    remote_has_branch,
    remote_has_folder,
)

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$")
_SPACE = re.compile(r"^[A-Za-z0-9~][A-Za-z0-9_~-]{0,254}$")
TEST_TIMEOUT_S = 20.0


class SourceDraft(BaseModel):
    """What a form sends; every field untrusted."""

    model_config = ConfigDict(str_strip_whitespace=True, frozen=True)

    kind: Literal["git", "confluence"]
    url: str = ""
    name: str = ""
    branch: str = ""
    path: str = ""
    token: SecretStr | None = None
    ssh_key: SecretStr | None = None
    space: str = ""
    label: str = ""
    email: str = ""
    pat: SecretStr | None = None


class FieldErrors(Exception):
    """Field name → what is wrong with it; nothing was stored."""

    def __init__(self, errors: dict[str, str]) -> None:
        self.errors = errors
        super().__init__("; ".join(f"{k}: {v}" for k, v in errors.items()))


@dataclass(frozen=True)
class CheckedSource:
    name: str
    kind: str
    settings: dict[str, object]
    credential: dict[str, str] | None


class SourceForm:
    def __init__(self, store: Store, *, cipher: TokenCipher | None, access: SourceAccess) -> None:
        self._store = store
        self._cipher = cipher
        self._access = access

    async def submit(
        self, tenant: str, actor: Actor, draft: SourceDraft, *, submission_key: str
    ) -> Outcome:
        """Check, test and store ``draft``; ``FieldErrors`` for what the form should show."""
        if not await is_admin(self._store, tenant, actor):
            return refused(NOT_ADMIN)
        checked = await self._check(draft)
        await self._test(checked)
        return await self._store_once(tenant, actor, checked, submission_key)

    async def _check(self, draft: SourceDraft) -> CheckedSource:
        errors: dict[str, str] = {}
        git = draft.kind == "git"
        if not draft.url:
            errors["url"] = "a URL is required"
        elif problem := await url_problem(draft.url, self._access, git=git):
            errors["url"] = problem
        name = draft.name or _default_name(draft)
        if not _NAME.fullmatch(name):
            errors["name"] = "1-63 letters, digits, '.', '_' or '-'"
        credential: dict[str, str] | None = None
        settings: dict[str, object] = {}
        if git:
            if draft.token and draft.ssh_key:
                errors["token"] = "give a token or a deploy key, not both"
            elif draft.token:
                credential = {"token": draft.token.get_secret_value()}
            elif draft.ssh_key:
                key = draft.ssh_key.get_secret_value()
                if "PRIVATE KEY" not in key:
                    errors["ssh_key"] = "paste the whole private key (BEGIN … PRIVATE KEY)"
                credential = {"ssh_key": key}
            if "url" not in errors:
                try:
                    checked = GitSourceSettings(
                        url=draft.url, branch=draft.branch or "main", path=draft.path
                    )
                    settings = checked.model_dump()
                except ValueError as exc:
                    errors[_git_field(str(exc))] = _first_error(exc)
        else:
            if not draft.space:
                errors["space"] = "the space key is required (e.g. OPS)"
            elif not _SPACE.fullmatch(draft.space):
                errors["space"] = "not a space key"
            if draft.pat and (draft.email or draft.token):
                errors["pat"] = "give an e-mail and API token (Cloud) or a PAT (Data Center)"
            elif draft.pat:
                credential = {"pat": draft.pat.get_secret_value()}
            elif draft.email and draft.token:
                credential = {"token": draft.token.get_secret_value()}
            else:
                errors["token"] = "Cloud: e-mail and API token; Data Center: a PAT"
            settings = {"base_url": draft.url.rstrip("/"), "space": draft.space}
            settings["label"] = draft.label or None
            if draft.email:
                settings["email"] = draft.email
        if credential is not None and self._cipher is None:
            errors.setdefault(
                "token", "this server cannot store credentials (RUNBOOK_ENCRYPTION_KEYS unset)"
            )
        if errors:
            raise FieldErrors(errors)
        return CheckedSource(name, draft.kind, settings, credential)

    async def _test(self, source: CheckedSource) -> None:
        """Read the source once, as a sync would; its failure becomes the field to fix."""
        try:
            async with asyncio.timeout(TEST_TIMEOUT_S):
                if source.kind == "git":
                    await self._test_git(source)
                else:
                    reader = confluence_reader(
                        source.name,
                        source.settings,
                        source.credential or {},
                        max_page_bytes=1,
                        access=self._access,
                    )
                    await reader.list_items()
        except TimeoutError as exc:
            raise FieldErrors({"url": "no answer within 20 s; is the address right?"}) from exc
        except RunbookError as exc:
            raise FieldErrors({_failed_field(source, exc.code): _reason(exc)}) from exc

    async def _test_git(self, source: CheckedSource) -> None:
        cred = source.credential or {}
        credential = GitCredential(token=cred.get("token"), ssh_key=cred.get("ssh_key"))
        url = str(source.settings["url"])
        access = self._access
        default = await asyncio.to_thread(
            remote_default_branch, source.name, url, credential, access=access
        )
        branch = str(source.settings.get("branch") or "")
        if branch == "main" and default != "main":
            source.settings["branch"] = branch = default
        if not await asyncio.to_thread(
            remote_has_branch, source.name, url, credential, branch, access=access
        ):
            raise FieldErrors({"branch": f"the repository has no branch {branch!r}"})
        folder = str(source.settings.get("path") or "")
        found = await asyncio.to_thread(
            remote_has_folder, source.name, url, branch, folder, credential, access=access
        )
        if not found:
            raise FieldErrors({"path": f"branch {branch!r} has no folder {folder!r}"})

    async def _store_once(
        self, tenant: str, actor: Actor, source: CheckedSource, submission_key: str
    ) -> Outcome:
        """Claim the submission and add the source: the claim stays uncommitted until the
        source is stored, so a second copy of the form waits for it, then finds it claimed
        (and the source there); a failed add releases the claim with its rollback."""
        sealed = None
        if source.credential is not None and self._cipher is not None:
            sealed = self._cipher.seal(dict(source.credential))
        webhook = {"secret": secrets.token_urlsafe(32)}
        async with self._store.pool.connection() as conn, conn.transaction():
            cur = await conn.execute(
                "INSERT INTO settings_submissions (submission_key, tenant_id) VALUES (%s, %s) "
                "ON CONFLICT DO NOTHING",
                (submission_key, tenant),
            )
            if cur.rowcount == 0:
                return Outcome(False, f"source {source.name} was added already")
            try:
                row = await add_source(
                    self._store,
                    tenant=tenant,
                    name=source.name,
                    kind=source.kind,
                    settings=source.settings,
                    credential=sealed,
                    webhook_secret=webhook if self._cipher is None else self._cipher.seal(webhook),
                )
            except ConfigurationError as exc:
                message = f"this workspace already has a source {source.name}"
                raise FieldErrors({"name": message}) from exc
            await record_change(
                conn,
                tenant=tenant,
                actor=actor.user_id,
                surface=actor.surface,
                action="source.added",
                target=row.name,
                after={"kind": row.kind, **row.settings, "credential": "sealed"},
            )
        message = f"source {row.name} added; its first sync is queued"
        return Outcome(True, message, str(row.source_id))


def _default_name(draft: SourceDraft) -> str:
    if draft.kind == "confluence":
        return draft.space.lower() or "confluence"
    tail = draft.url.rstrip("/").rsplit("/", 1)[-1].rsplit(":", 1)[-1]
    name = re.sub(r"[^A-Za-z0-9_.-]", "-", tail.removesuffix(".git")).strip("-.") or "git"
    return name[:63]


def _git_field(message: str) -> str:
    for field in ("branch", "path", "url"):
        if field in message.lower():
            return field
    return "url"


def _first_error(exc: ValueError) -> str:
    errors = getattr(exc, "errors", None)
    if callable(errors):
        return str(errors()[0]["msg"]).removeprefix("Value error, ").replace("--path", "path")
    return str(exc)


def _failed_field(source: CheckedSource, code: str) -> str:
    if code in ("source_auth_failed", "confluence_auth_failed"):
        return "token" if source.credential is None or "token" in source.credential else "pat"
    if code in ("source_not_found", "confluence_not_found"):
        return "branch" if source.kind == "git" else "space"
    return "url"


def _reason(exc: RunbookError) -> str:
    reason = getattr(exc, "reason", None)
    text = reason if isinstance(reason, str) else str(exc)
    return text.replace("; pass --branch", "").replace("--branch", "branch")[:300]
