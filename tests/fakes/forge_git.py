"""The bare git repositories behind the fake forge: read a file on a branch, commit files onto a
branch (plumbing, no checkout), move refs. A merge moves the base branch, so a ``file://`` git
source syncing from the same repository sees the merged runbook."""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path

_ENV = {
    **{k: v for k, v in os.environ.items() if not k.startswith("GIT_")},
    "GIT_AUTHOR_NAME": "Forge Reviewer",
    "GIT_AUTHOR_EMAIL": "reviewer@example.com",
    "GIT_COMMITTER_NAME": "Forge Reviewer",
    "GIT_COMMITTER_EMAIL": "reviewer@example.com",
    "GIT_CONFIG_NOSYSTEM": "1",
}


class BareRepo:
    def __init__(self, path: Path, *, seed: dict[str, str]) -> None:
        self.path = path
        if not path.exists():
            self.git("init", "-q", "--bare", "-b", "main", str(path), cwd=path.parent)
            self.commit("main", "seed", seed, parent=None)

    @property
    def url(self) -> str:
        return self.path.as_uri()

    def git(
        self,
        *args: str,
        cwd: Path | None = None,
        stdin: bytes | None = None,
        env: dict[str, str] | None = None,
    ) -> str:
        return self.raw(*args, cwd=cwd, stdin=stdin, env=env).strip()

    def raw(
        self,
        *args: str,
        cwd: Path | None = None,
        stdin: bytes | None = None,
        env: dict[str, str] | None = None,
    ) -> str:
        done = subprocess.run(
            ["git", *args],
            cwd=cwd or self.path,
            env={**_ENV, **(env or {})},
            input=stdin,
            capture_output=True,
            check=True,
        )
        return done.stdout.decode()

    def sha(self, branch: str) -> str | None:
        try:
            return self.git("rev-parse", "--verify", "-q", f"refs/heads/{branch}")
        except subprocess.CalledProcessError:
            return None

    def read(self, branch: str, path: str) -> str | None:
        if self.sha(branch) is None:
            return None
        try:
            return self.raw("show", f"refs/heads/{branch}:{path}")
        except subprocess.CalledProcessError:
            return None

    def blob_sha(self, content: str) -> str:
        return self.git("hash-object", "--stdin", stdin=content.encode())

    def set_branch(self, branch: str, sha: str) -> None:
        self.git("update-ref", f"refs/heads/{branch}", sha)

    def commit(
        self, branch: str, message: str, files: dict[str, str], *, parent: str | None
    ) -> str:
        """Commit ``files`` (path → content) on top of ``parent``; ``branch`` then points at it."""
        with tempfile.TemporaryDirectory() as folder:
            env = {"GIT_INDEX_FILE": str(Path(folder) / "index")}
            if parent is not None:
                self.git("read-tree", parent, env=env)
            for path, content in files.items():
                blob = self.git("hash-object", "-w", "--stdin", stdin=content.encode())
                self.git("update-index", "--add", "--cacheinfo", f"100644,{blob},{path}", env=env)
            tree = self.git("write-tree", env=env)
        parents = ["-p", parent] if parent else []
        sha = self.git("commit-tree", tree, *parents, "-m", message)
        self.set_branch(branch, sha)
        return sha

    def merge(self, head: str, base: str, message: str) -> str:
        """Merge ``head`` into ``base`` with a merge commit (the branch's tree wins)."""
        tree = self.git("rev-parse", f"refs/heads/{head}^{{tree}}")
        base_sha, head_sha = self.sha(base), self.sha(head)
        assert base_sha and head_sha
        sha = self.git("commit-tree", tree, "-p", base_sha, "-p", head_sha, "-m", message)
        self.set_branch(base, sha)
        return sha

    def changed_files(self, head: str, since: str) -> dict[str, str]:
        """Files ``head`` changed since commit ``since`` (the base when the PR was opened)."""
        names = self.git("diff", "--name-only", since, f"refs/heads/{head}").split()
        return {name: self.read(head, name) or "" for name in names}
