"""A draft as a GitLab merge request (REST v4): one commit on a new branch through
``repository/commits`` with an action, then a merge request. Looks before it creates."""

from __future__ import annotations

import base64
from functools import partial
from urllib.parse import quote

from bot.core.drafts.change import Delivered, FileChange
from bot.core.drafts.forge_http import (
    DeliveryError,
    ForgeHttp,
    refuse_read_only,
    request_ok,
)

_READ_ONLY = (
    "the source's token can read the project but not push to it (it needs write_repository and api)"
)
_DEVELOPER = 30
_ok = partial(request_ok, forge="GitLab", read_only=_READ_ONLY)
_writable = partial(refuse_read_only, message=_READ_ONLY)


async def open_merge_request(http: ForgeHttp, project: str, change: FileChange) -> Delivered:
    """``project``: ``group/name`` (or a numeric id)."""
    pid = quote(project, safe="")
    about = await _ok(http, "GET", f"projects/{pid}")
    access = (about.body.get("permissions") or {}).get("project_access") or {}
    if access and int(access.get("access_level") or 0) < _DEVELOPER:
        raise DeliveryError("read_only", _READ_ONLY)
    base = str(about.body.get("default_branch") or "main")
    found = await _merge_request(http, pid, change.branch)
    if found is not None:
        return found
    branch = await http.request(
        "GET", f"projects/{pid}/repository/branches/{quote(change.branch, safe='')}"
    )
    current: str | None = None
    if branch.status == 200:
        current = await _file(http, pid, change.path, change.branch)
    if branch.status != 200 or not change.made_in(current):
        source = change.branch if branch.status == 200 else base
        existing = current if branch.status == 200 else await _file(http, pid, change.path, base)
        if change.append and existing is None:
            raise DeliveryError("not_found", f"{change.path} is not in the project any more")
        action = "update" if existing is not None else "create"
        body: dict[str, object] = {
            "branch": change.branch,
            "commit_message": change.message,
            "actions": [
                {
                    "action": action,
                    "file_path": change.path,
                    "content": change.applied_to(existing),
                    "encoding": "text",
                }
            ],
        }
        if source != change.branch:
            body["start_branch"] = base
        committed = await http.request("POST", f"projects/{pid}/repository/commits", json=body)
        _writable(committed)
        if committed.status != 201:
            raise DeliveryError("refused", f"GitLab refused the commit (HTTP {committed.status})")
    made = await http.request(
        "POST",
        f"projects/{pid}/merge_requests",
        json={
            "source_branch": change.branch,
            "target_branch": base,
            "title": change.title,
            "description": change.body,
        },
    )
    _writable(made)
    if made.status == 201:
        return _delivered(made.body, change.branch, change.path, created=True)
    found = await _merge_request(http, pid, change.branch)  # 409: one is open already
    if found is None:
        raise DeliveryError("refused", f"GitLab refused the merge request (HTTP {made.status})")
    return found


async def _merge_request(http: ForgeHttp, pid: str, branch: str) -> Delivered | None:
    listed = await _ok(
        http,
        "GET",
        f"projects/{pid}/merge_requests",
        params={"source_branch": branch, "state": "all"},
    )
    rows = [m for m in listed.body or [] if m.get("source_branch", branch) == branch]
    return _delivered(rows[0], branch, None, created=False) if rows else None


async def _file(http: ForgeHttp, pid: str, path: str, ref: str) -> str | None:
    reply = await http.request(
        "GET", f"projects/{pid}/repository/files/{quote(path, safe='')}", params={"ref": ref}
    )
    if reply.status != 200 or not isinstance(reply.body, dict):
        return None
    return base64.b64decode(reply.body.get("content", "")).decode("utf-8", "replace")


def _delivered(mr: dict[str, object], branch: str, path: str | None, *, created: bool) -> Delivered:
    return Delivered(
        kind="gitlab",
        link=str(mr["web_url"]),
        number=int(str(mr["iid"])),
        branch=branch,
        path=path,
        created=created,
    )
