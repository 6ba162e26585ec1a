"""A fake GitHub (REST v3 under ``/api/v3``, as Enterprise serves it) and GitLab (REST v4 under
``/api/v4``) on 127.0.0.1, backed by real bare repositories (``tests/fakes/forge_git.py``).

Enough of each API for a draft's delivery: the repository / project, branches, file contents,
commits with actions, pull and merge requests (one open per branch, as the forges refuse a
second), merges that move the base branch. ``read_only_token`` reads and gets 403 on writes;
``fail(prefix, status, times)`` answers the next API requests under a path with an error (429
carries ``Retry-After``); ``requests`` logs each API call.
"""

from __future__ import annotations

import asyncio
import base64
import itertools
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any
from urllib.parse import unquote

from aiohttp import web

from tests.fakes.forge_git import BareRepo
from tests.fakes.loopback import serve_on_loopback

TOKEN = "forge-write-token"
READ_ONLY_TOKEN = "forge-read-token"
SEED = {"runbooks/README.md": "# Runbooks\n\nOur runbooks live here.\n"}


@dataclass
class Pull:
    kind: str  # "github" | "gitlab"
    repo: str
    number: int
    head: str
    base: str
    title: str
    body: str
    since: str  # the base's commit when it was opened
    state: str = "open"  # open | closed (merged)
    merged: bool = False


@dataclass
class FakeForge:
    root: Path
    pulls: list[Pull] = field(default_factory=list)
    requests: list[tuple[str, str, int]] = field(default_factory=list)
    _failures: list[tuple[str, int]] = field(default_factory=list)
    _repos: dict[str, BareRepo] = field(default_factory=dict)
    _numbers: itertools.count[int] = field(default_factory=lambda: itertools.count(1))
    _runner: web.AppRunner | None = None
    _port: int = 0
    _lock: asyncio.Lock = field(default_factory=asyncio.Lock)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._port}"

    def repo(self, name: str) -> BareRepo:
        """``owner/name``'s repository, made (with one seed commit on main) on first use."""
        if name not in self._repos:
            path = self.root / f"{name}.git"
            path.parent.mkdir(parents=True, exist_ok=True)
            self._repos[name] = BareRepo(path, seed=SEED)
        return self._repos[name]

    def fail(self, prefix: str, status: int, *, times: int = 1) -> None:
        self._failures += [(prefix, status)] * times

    def changed_files(self, pull: Pull) -> dict[str, str]:
        return self.repo(pull.repo).changed_files(pull.head, pull.since)

    def merge(self, pull: Pull) -> None:
        """Merge as a reviewer would: the base branch moves to a merge commit."""
        self.repo(pull.repo).merge(pull.head, pull.base, f"Merge #{pull.number}")
        pull.state, pull.merged = "closed", True

    async def __aenter__(self) -> FakeForge:
        app = web.Application(middlewares=[self._gate])
        gh, gl = "/api/v3/repos/{o}/{r}", "/api/v4/projects/{pid}"
        app.router.add_get(gh, self._gh_repo)
        app.router.add_get(gh + "/git/ref/heads/{branch:.+}", self._gh_ref)
        app.router.add_post(gh + "/git/refs", self._gh_new_ref)
        app.router.add_get(gh + "/contents/{path:.+}", self._gh_contents)
        app.router.add_put(gh + "/contents/{path:.+}", self._gh_put)
        app.router.add_get(gh + "/pulls", self._gh_pulls)
        app.router.add_post(gh + "/pulls", self._gh_new_pull)
        app.router.add_get(gl, self._gl_project)
        app.router.add_get(gl + "/repository/branches/{branch:.+}", self._gl_branch)
        app.router.add_get(gl + "/repository/files/{path:.+}", self._gl_file)
        app.router.add_post(gl + "/repository/commits", self._gl_commit)
        app.router.add_get(gl + "/merge_requests", self._gl_mrs)
        app.router.add_post(gl + "/merge_requests", self._gl_new_mr)
        self._runner, self._port = await serve_on_loopback(app)
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    @web.middleware
    async def _gate(self, request: web.Request, handler: Any) -> web.StreamResponse:
        for n, (prefix, status) in enumerate(self._failures):
            if request.raw_path.startswith(prefix):
                del self._failures[n]
                self.requests.append((request.method, request.path, status))
                headers = {"Retry-After": "0"} if status == 429 else None
                return web.json_response({"message": "injected"}, status=status, headers=headers)
        token = _token(request)
        if token not in (TOKEN, READ_ONLY_TOKEN):
            response: web.StreamResponse = web.json_response(
                {"message": "Bad credentials"}, status=401
            )
        elif token == READ_ONLY_TOKEN and request.method != "GET":
            gitlab = request.path.startswith("/api/v4")
            message = "insufficient_scope" if gitlab else "Resource not accessible by integration"
            response = web.json_response({"message": message}, status=403)
        else:
            async with self._lock:  # one request at a time: git plumbing is not concurrent
                response = await handler(request)
        self.requests.append((request.method, request.path, response.status))
        return response

    # GitHub
    def _gh(self, request: web.Request) -> tuple[str, BareRepo]:
        name = f"{request.match_info['o']}/{request.match_info['r']}"
        return name, self.repo(name)

    async def _gh_repo(self, request: web.Request) -> web.Response:
        name, _ = self._gh(request)
        push = _token(request) == TOKEN
        return web.json_response(
            {
                "full_name": name,
                "default_branch": "main",
                "permissions": {"push": push, "pull": True},
            }
        )

    async def _gh_ref(self, request: web.Request) -> web.Response:
        _, repo = self._gh(request)
        sha = repo.sha(request.match_info["branch"])
        if sha is None:
            return web.json_response({"message": "Not Found"}, status=404)
        return web.json_response(
            {"ref": f"refs/heads/{request.match_info['branch']}", "object": {"sha": sha}}
        )

    async def _gh_new_ref(self, request: web.Request) -> web.Response:
        _, repo = self._gh(request)
        body = await request.json()
        branch = str(body["ref"]).removeprefix("refs/heads/")
        if repo.sha(branch) is not None:
            return web.json_response({"message": "Reference already exists"}, status=422)
        repo.set_branch(branch, body["sha"])
        return web.json_response({"ref": body["ref"], "object": {"sha": body["sha"]}}, status=201)

    async def _gh_contents(self, request: web.Request) -> web.Response:
        _, repo = self._gh(request)
        content = repo.read(request.query.get("ref", "main"), request.match_info["path"])
        if content is None:
            return web.json_response({"message": "Not Found"}, status=404)
        encoded = base64.b64encode(content.encode()).decode()
        return web.json_response(
            {
                "type": "file",
                "encoding": "base64",
                "content": encoded,
                "sha": repo.blob_sha(content),
            }
        )

    async def _gh_put(self, request: web.Request) -> web.Response:
        _, repo = self._gh(request)
        body, path = await request.json(), request.match_info["path"]
        branch = body.get("branch", "main")
        parent = repo.sha(branch)
        if parent is None:
            return web.json_response({"message": "Branch not found"}, status=404)
        old = repo.read(branch, path)
        if old is not None and body.get("sha") != repo.blob_sha(old):
            return web.json_response({"message": f"{path} does not match"}, status=409)
        content = base64.b64decode(body["content"]).decode()
        sha = repo.commit(branch, body["message"], {path: content}, parent=parent)
        return web.json_response({"commit": {"sha": sha}}, status=200 if old is not None else 201)

    def _gh_pull(self, request: web.Request, pull: Pull) -> dict[str, Any]:
        return {
            "number": pull.number,
            "state": pull.state,
            "merged": pull.merged,
            "title": pull.title,
            "body": pull.body,
            "head": {"ref": pull.head},
            "base": {"ref": pull.base},
            "html_url": f"{self.url}/{pull.repo}/pull/{pull.number}",
        }

    async def _gh_pulls(self, request: web.Request) -> web.Response:
        name, _ = self._gh(request)
        head = request.query.get("head", "").split(":")[-1]
        state = request.query.get("state", "open")
        found = [
            self._gh_pull(request, p)
            for p in self.pulls
            if p.kind == "github"
            and p.repo == name
            and (not head or p.head == head)
            and (state == "all" or p.state == state)
        ]
        return web.json_response(found)

    async def _gh_new_pull(self, request: web.Request) -> web.Response:
        name, repo = self._gh(request)
        body = await request.json()
        head = str(body["head"]).split(":")[-1]
        if repo.sha(head) is None:
            return web.json_response({"message": "Validation Failed"}, status=422)
        if any(p.repo == name and p.head == head and p.state == "open" for p in self.pulls):
            return web.json_response({"message": "A pull request already exists"}, status=422)
        pull = self._open("github", name, head, body["base"], body["title"], body.get("body", ""))
        return web.json_response(self._gh_pull(request, pull), status=201)

    def _open(self, kind: str, name: str, head: str, base: str, title: str, body: str) -> Pull:
        since = self.repo(name).sha(base)
        assert since is not None
        pull = Pull(kind, name, next(self._numbers), head, base, title, body, since)
        self.pulls.append(pull)
        return pull

    # GitLab
    def _gl(self, request: web.Request) -> tuple[str, BareRepo]:
        name = unquote(request.match_info["pid"])
        return name, self.repo(name)

    async def _gl_project(self, request: web.Request) -> web.Response:
        name, _ = self._gl(request)
        level = 40 if _token(request) == TOKEN else 20
        return web.json_response(
            {
                "path_with_namespace": name,
                "default_branch": "main",
                "permissions": {"project_access": {"access_level": level}},
            }
        )

    async def _gl_branch(self, request: web.Request) -> web.Response:
        _, repo = self._gl(request)
        sha = repo.sha(unquote(request.match_info["branch"]))
        if sha is None:
            return web.json_response({"message": "404 Branch Not Found"}, status=404)
        return web.json_response({"name": request.match_info["branch"], "commit": {"id": sha}})

    async def _gl_file(self, request: web.Request) -> web.Response:
        _, repo = self._gl(request)
        content = repo.read(request.query.get("ref", "main"), unquote(request.match_info["path"]))
        if content is None:
            return web.json_response({"message": "404 File Not Found"}, status=404)
        return web.json_response(
            {"encoding": "base64", "content": base64.b64encode(content.encode()).decode()}
        )

    async def _gl_commit(self, request: web.Request) -> web.Response:
        _, repo = self._gl(request)
        body = await request.json()
        branch, start = body["branch"], body.get("start_branch")
        if start and repo.sha(branch) is not None:
            return web.json_response({"message": "A branch called this already exists"}, status=400)
        parent = repo.sha(start or branch)
        if parent is None:
            return web.json_response(
                {"message": "You can only create or edit files on a branch"}, status=400
            )
        files = {}
        for action in body["actions"]:
            exists = repo.read(start or branch, action["file_path"]) is not None
            if (action["action"] == "create") == exists:
                return web.json_response(
                    {"message": f"{action['action']}: wrong state"}, status=400
                )
            files[action["file_path"]] = action["content"]
        sha = repo.commit(branch, body["commit_message"], files, parent=parent)
        return web.json_response({"id": sha}, status=201)

    def _gl_mr(self, pull: Pull) -> dict[str, Any]:
        return {
            "iid": pull.number,
            "state": "opened" if pull.state == "open" else "merged",
            "title": pull.title,
            "description": pull.body,
            "source_branch": pull.head,
            "target_branch": pull.base,
            "web_url": f"{self.url}/{pull.repo}/-/merge_requests/{pull.number}",
        }

    async def _gl_mrs(self, request: web.Request) -> web.Response:
        name, _ = self._gl(request)
        branch = request.query.get("source_branch")
        found = [
            self._gl_mr(p)
            for p in self.pulls
            if p.kind == "gitlab" and p.repo == name and (branch is None or p.head == branch)
        ]
        return web.json_response(found)

    async def _gl_new_mr(self, request: web.Request) -> web.Response:
        name, repo = self._gl(request)
        body = await request.json()
        head = body["source_branch"]
        if any(p.repo == name and p.head == head and p.state == "open" for p in self.pulls):
            return web.json_response(
                {"message": ["Another open merge request already exists"]}, status=409
            )
        pull = self._open(
            "gitlab", name, head, body["target_branch"], body["title"], body.get("description", "")
        )
        return web.json_response(self._gl_mr(pull), status=201)


def _token(request: web.Request) -> str:
    bearer = request.headers.get("Authorization", "").split(" ")[-1]
    return request.headers.get("PRIVATE-TOKEN") or bearer
