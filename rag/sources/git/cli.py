"""Running the git CLI for a source: the environment that carries its credential, and git's
failures turned into ``SourceSyncError``s that say what to fix.

A credential never reaches a command line or a log: an https token travels as an
``http.extraHeader`` in ``GIT_CONFIG_*`` variables, a deploy key as a file (mode 0600, in a
private temporary folder, deleted afterwards) that ``GIT_SSH_COMMAND`` names.
"""

from __future__ import annotations

import base64
import os
import re
import shlex
import subprocess
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from rag.errors import SourceSyncError

FETCH_TIMEOUT_S = 300.0
LOCAL_TIMEOUT_S = 120.0
# `source add` waits on this in the foreground: an answer to ls-remote comes in seconds.
LS_REMOTE_TIMEOUT_S = 60.0
# Transports git may use at all (submodules and redirects included): never ext:: or fd::.
ALLOWED_PROTOCOLS = "https:http:ssh:file"
_SCP_LIKE = re.compile(r"^[A-Za-z0-9._-]+@[A-Za-z0-9.-]+:[^/].*$")


@dataclass(frozen=True)
class GitCredential:
    """An https token or an ssh deploy key (the private key's text), never both."""

    token: str | None = None
    ssh_key: str | None = None


def check_git_url(url: str) -> str:
    """Accept https, ssh (``ssh://`` or ``git@host:path``) and ``file://`` URLs without a
    password in them; anything else is a clear error (``ext::`` would run a command)."""
    if _SCP_LIKE.match(url):
        return url
    scheme, sep, rest = url.partition("://")
    if not sep or scheme not in ("https", "http", "ssh", "file"):
        raise SourceSyncError(
            url.split("@")[-1],
            "the URL must be https://, ssh://, git@host:path or file://",
            code="source_invalid",
        )
    authority = rest.split("/", 1)[0]
    if scheme in ("https", "http") and "@" in authority:
        raise SourceSyncError(
            rest.split("@", 1)[-1],
            "put the token in an environment variable and pass --token-env, not in the URL",
            code="source_invalid",
        )
    return url


@contextmanager
def git_environment(
    credential: GitCredential | None, known_hosts: Path
) -> Iterator[dict[str, str]]:
    """The environment for git commands of one sync; a key file lives only inside the block."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(
        {
            "GIT_TERMINAL_PROMPT": "0",
            "GIT_ALLOW_PROTOCOL": ALLOWED_PROTOCOLS,
            # Neither the host's nor the service account's git config (credential helpers,
            # URL rewrites) takes part: only what this source says.
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": os.devnull,
            "LC_ALL": "C",
        }
    )
    if credential is not None and credential.token:
        basic = base64.b64encode(f"x-access-token:{credential.token}".encode()).decode()
        env.update(
            {
                "GIT_CONFIG_COUNT": "1",
                "GIT_CONFIG_KEY_0": "http.extraHeader",
                "GIT_CONFIG_VALUE_0": f"Authorization: Basic {basic}",
            }
        )
    with tempfile.TemporaryDirectory(prefix="runbook-git-") as private:
        ssh = [
            "ssh",
            "-o IdentitiesOnly=yes",
            "-o StrictHostKeyChecking=accept-new",
            f"-o UserKnownHostsFile={shlex.quote(str(known_hosts))}",
            "-o BatchMode=yes",
            "-o ConnectTimeout=20",
        ]
        if credential is not None and credential.ssh_key:
            key_file = Path(private) / "deploy_key"
            fd = os.open(key_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w") as key:
                key.write(credential.ssh_key.rstrip("\n") + "\n")
            ssh.insert(1, f"-i {shlex.quote(str(key_file))}")
        env["GIT_SSH_COMMAND"] = " ".join(ssh)
        yield env


def remote_default_branch(source: str, url: str, credential: GitCredential | None) -> str:
    """The branch the remote's ``HEAD`` points at (``git ls-remote --symref URL HEAD``).

    Raises ``SourceSyncError`` when the remote cannot be read or names no default branch (an
    empty repository, a dumb-http server): both say to pass ``--branch``.
    """
    with tempfile.TemporaryDirectory(prefix="runbook-git-") as scratch:
        # A throwaway known_hosts: the source's own cache pins the host key at its first sync.
        with git_environment(credential, Path(scratch) / "known_hosts") as env:
            listed = run_git(
                source,
                ["ls-remote", "--symref", url, "HEAD"],
                env=env,
                cwd=Path(scratch),
                timeout_s=LS_REMOTE_TIMEOUT_S,
            )
    for line in listed.decode("utf-8", "replace").splitlines():
        target, _, name = line.partition("\t")
        if name == "HEAD" and target.startswith("ref: refs/heads/"):
            return target.removeprefix("ref: refs/heads/")
    raise SourceSyncError(
        source,
        "the repository names no default branch (is it empty?); pass --branch",
        code="source_not_found",
    )


def run_git(
    source: str,
    args: Sequence[str],
    *,
    env: dict[str, str],
    cwd: Path,
    stdin: bytes | None = None,
    timeout_s: float = LOCAL_TIMEOUT_S,
    branch: str | None = None,
) -> bytes:
    """Run ``git args`` in ``cwd``; stdout, or a ``SourceSyncError`` naming ``source``."""
    try:
        done = subprocess.run(
            ["git", *args],
            cwd=cwd,
            env=env,
            input=stdin,
            capture_output=True,
            timeout=timeout_s,
            check=False,
        )
    except FileNotFoundError as exc:
        raise SourceSyncError(
            source, "the git command is not installed", code="source_unavailable"
        ) from exc
    except subprocess.TimeoutExpired as exc:
        raise SourceSyncError(
            source, f"git {args[0]} took over {timeout_s:.0f} s", code="source_unreachable"
        ) from exc
    if done.returncode != 0:
        raise explain_failure(source, done.stderr.decode("utf-8", "replace"), branch=branch)
    return done.stdout


_AUTH = (
    "authentication failed",
    "could not read username",
    "could not read password",
    "permission denied",
    "terminal prompts disabled",
    "the requested url returned error: 401",
    "the requested url returned error: 403",
    "invalid username or password",
    "access denied",
)
_UNREACHABLE = (
    "could not resolve host",
    "connection refused",
    "connection timed out",
    "timed out",
    "network is unreachable",
    "no route to host",
    "does not appear to be a git repository",
    "repository not found",
    "not found",
    "could not read from remote repository",
    "failed to connect",
)


def explain_failure(source: str, stderr: str, *, branch: str | None) -> SourceSyncError:
    """What went wrong, from git's own words (its last ``fatal:`` line, trimmed)."""
    lowered = stderr.lower()
    if branch is not None and "couldn't find remote ref" in lowered:
        return SourceSyncError(
            source,
            f"branch {branch!r} does not exist in the repository; pass --branch",
            code="source_not_found",
        )
    detail = _last_fatal_line(stderr)
    if any(marker in lowered for marker in _AUTH):
        return SourceSyncError(
            source,
            f"the repository refused the credentials (or needs some): {detail}",
            code="source_auth_failed",
        )
    if any(marker in lowered for marker in _UNREACHABLE):
        return SourceSyncError(
            source, f"cannot reach the repository: {detail}", code="source_unreachable"
        )
    return SourceSyncError(source, f"git failed: {detail}")


def _last_fatal_line(stderr: str) -> str:
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    fatal = [line for line in lines if line.lower().startswith(("fatal:", "error:"))]
    line = (fatal or lines or ["no message"])[-1]
    # Userinfo in a URL git echoes back (never ours: add refuses URLs with a password).
    return re.sub(r"://[^/@\s]+@", "://", line)[:300]
