"""Real git repositories for source tests: made with the git CLI in a test's folder."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from rag import Settings, SourceAccess

_ENV = {
    **{k: v for k, v in os.environ.items() if not k.startswith("GIT_")},
    "GIT_AUTHOR_NAME": "Runbook Author",
    "GIT_AUTHOR_EMAIL": "author@example.com",
    "GIT_COMMITTER_NAME": "Runbook Author",
    "GIT_COMMITTER_EMAIL": "author@example.com",
    "GIT_CONFIG_NOSYSTEM": "1",
}


class GitRepo:
    """A working repository on ``branch``; ``url`` is its ``file://`` address."""

    def __init__(self, root: Path, *, branch: str = "main") -> None:
        self.root = root
        root.mkdir(parents=True, exist_ok=True)
        self.git("init", "-q", "-b", branch)

    @property
    def url(self) -> str:
        return self.root.as_uri()

    def git(self, *args: str, when: str | None = None) -> str:
        env = dict(_ENV)
        if when is not None:
            env["GIT_AUTHOR_DATE"] = env["GIT_COMMITTER_DATE"] = when
        done = subprocess.run(
            ["git", *args], cwd=self.root, env=env, capture_output=True, text=True, check=True
        )
        return done.stdout.strip()

    def write(self, path: str, content: str | bytes) -> Path:
        target = self.root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            target.write_bytes(content)
        else:
            target.write_text(content, encoding="utf-8")
        return target

    def commit(self, message: str, *, when: str | None = None) -> str:
        self.git("add", "-A")
        self.git("commit", "-q", "--allow-empty", "-m", message, when=when)
        return self.git("rev-parse", "HEAD")


def local_sources(settings: Settings) -> Settings:
    """``settings`` with the operator's allowances for sources on this machine (issue 36):
    ``file://`` repositories made in a test and fakes on 127.0.0.1."""
    return settings.model_copy(
        update={"source_allow_file": True, "source_allow_private_networks": True}
    )


LOCAL_SOURCES = SourceAccess(allow_file=True, allow_private_networks=True)
