"""A draft as a GitHub pull request (REST v3, github.com or Enterprise through its API base):
a branch named for the draft, one commit with the file (``contents``), one pull request.
Every step looks before it creates, so a retry or a double submit finds what is there."""

from __future__ import annotations

import base64
from functools import partial
from urllib.parse import quote

from bot.core.drafts.change import Delivered, FileChange
from bot.core.drafts.forge_http import (
    DeliveryError,
    ForgeHttp,
    Reply,
    refuse_read_only,
    request_ok,
)

_READ_ONLY = "the source's token can read the repository but not push to it"
_ok = partial(request_ok, forge="GitHub", read_only=_READ_ONLY)
_writable = partial(refuse_read_only, message=_READ_ONLY)


async def open_pull_request(http: ForgeHttp, repo: str, change: FileChange) -> Delivered:
    """``repo``: ``owner/name``. Returns the pull request (an existing open or merged one for
    the same branch counts)."""
    about = await _ok(http, "GET", f"repos/{repo}")
    if about.body.get("permissions", {}).get("push") is False:
        raise DeliveryError("read_only", _READ_ONLY)
    base = str(about.body.get("default_branch") or "main")
    found = await _pull(http, repo, change.branch)
    if found is not None:
        return found
    await _branch(http, repo, change.branch, base)
    await _commit(http, repo, change, base)
    created = await http.request(
        "POST",
        f"repos/{repo}/pulls",
        json={"title": change.title, "head": change.branch, "base": base, "body": change.body},
    )
    _writable(created)
    if created.status == 201:
        return _delivered(created.body, change, created=True)
    found = await _pull(http, repo, change.branch)  # 422: one is open for the branch already
    if found is None:
        raise DeliveryError("refused", f"GitHub refused the pull request (HTTP {created.status})")
    return found


async def _pull(http: ForgeHttp, repo: str, branch: str) -> Delivered | None:
    owner = repo.split("/", 1)[0]
    listed = await _ok(
        http, "GET", f"repos/{repo}/pulls", params={"head": f"{owner}:{branch}", "state": "all"}
    )
    pulls = [p for p in listed.body or [] if p.get("head", {}).get("ref", branch) == branch]
    if not pulls:
        return None
    return _delivered(pulls[0], None, created=False, branch=branch)


async def _branch(http: ForgeHttp, repo: str, branch: str, base: str) -> None:
    ref = await http.request("GET", f"repos/{repo}/git/ref/heads/{quote(branch)}")
    if ref.status == 200:
        return
    head = await _ok(http, "GET", f"repos/{repo}/git/ref/heads/{quote(base)}")
    made = await http.request(
        "POST",
        f"repos/{repo}/git/refs",
        json={"ref": f"refs/heads/{branch}", "sha": head.body["object"]["sha"]},
    )
    _writable(made)
    if made.status not in (201, 422):  # 422: an earlier attempt made it
        raise DeliveryError("refused", f"GitHub refused the branch (HTTP {made.status})")


async def _commit(http: ForgeHttp, repo: str, change: FileChange, base: str) -> None:
    path = quote(change.path)
    on_branch = await http.request(
        "GET", f"repos/{repo}/contents/{path}", params={"ref": change.branch}
    )
    current = _decoded(on_branch)
    if change.made_in(current):
        return
    if change.append and current is None:
        raise DeliveryError("not_found", f"{change.path} is not in the repository any more")
    body = {
        "message": change.message,
        "content": base64.b64encode(change.applied_to(current).encode()).decode(),
        "branch": change.branch,
    }
    if on_branch.status == 200:
        body["sha"] = on_branch.body["sha"]
    put = await http.request("PUT", f"repos/{repo}/contents/{path}", json=body)
    _writable(put)
    if put.status not in (200, 201):
        raise DeliveryError("refused", f"GitHub refused the commit (HTTP {put.status})")


def _decoded(reply: Reply) -> str | None:
    if reply.status != 200 or not isinstance(reply.body, dict):
        return None
    return base64.b64decode(reply.body.get("content", "")).decode("utf-8", "replace")


def _delivered(
    pull: dict[str, object], change: FileChange | None, *, created: bool, branch: str | None = None
) -> Delivered:
    return Delivered(
        kind="github",
        link=str(pull["html_url"]),
        number=int(str(pull["number"])),
        branch=change.branch if change else branch,
        path=change.path if change else None,
        created=created,
    )
