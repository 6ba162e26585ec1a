"""Whether a folder exists in a git repository's branch, checked before a source is saved.

``runbook source add … --path SUBDIR`` with a folder the repository does not have would sync
nothing, forever and silently; one blob-less fetch of the branch's tip settles it at ``add``.
"""

from __future__ import annotations

import tempfile
from pathlib import Path, PurePosixPath

from rag.sources.access import SourceAccess
from rag.sources.git.cli import (
    FETCH_TIMEOUT_S,
    GitCredential,
    git_environment,
    run_git,
)
from rag.sources.git.target import git_target

__all__ = ["remote_has_folder"]


def remote_has_folder(
    source: str,
    url: str,
    branch: str,
    folder: str,
    credential: GitCredential | None,
    *,
    access: SourceAccess,
) -> bool:
    """Whether ``folder`` (relative to the repository's root) is a folder at the tip of
    ``branch``; fetches one commit's trees, no file contents. Raises ``SourceSyncError`` when
    the repository or the branch cannot be read; the URL is checked against ``access`` first."""
    wanted = PurePosixPath(folder.strip("/")).as_posix()
    if wanted in ("", "."):
        return True
    target = git_target(source, url, access)
    with tempfile.TemporaryDirectory(prefix="runbook-git-") as scratch:
        repo = Path(scratch) / "repo"
        repo.mkdir()
        with git_environment(credential, Path(scratch) / "known_hosts", target) as env:
            run_git(source, ["init", "--quiet"], env=env, cwd=repo)
            run_git(
                source,
                [
                    "fetch",
                    "--quiet",
                    "--depth=1",
                    "--filter=blob:none",
                    "--no-tags",
                    "--",
                    url,
                    f"refs/heads/{branch}",
                ],
                env=env,
                cwd=repo,
                timeout_s=FETCH_TIMEOUT_S,
                branch=branch,
            )
            listed = run_git(
                source,
                ["ls-tree", "-d", "--name-only", "FETCH_HEAD", "--", wanted],
                env=env,
                cwd=repo,
            )
    return wanted in listed.decode("utf-8", "replace").splitlines()
