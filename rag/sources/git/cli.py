"""Running the git CLI for a source: the environment that carries its credential, and git's
failures turned into ``SourceSyncError``s that say what to fix.

A credential never reaches a command line or a log: an https token travels as an
``http.<origin>/.extraHeader`` (sent to the source's own origin alone) in ``GIT_CONFIG_*``
variables, a deploy key as a file (mode 0600, in a private temporary folder, deleted
afterwards) that ``GIT_SSH_COMMAND`` names. Commands that reach the remote run with the
checked ``GitTarget`` (rag/sources/git/target.py); every other command may use no transport at
all, so nothing local (a lazily fetched blob) ever opens a connection nobody checked.
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
from dataclasses import dataclass, field
from pathlib import Path

from rag.errors import SourceSyncError
from rag.sources.access import SourceAccess
from rag.sources.git.target import GitTarget, git_target

FETCH_TIMEOUT_S = 300.0
LOCAL_TIMEOUT_S = 120.0
# `source add` waits on this in the foreground: an answer to ls-remote comes in seconds.
LS_REMOTE_TIMEOUT_S = 60.0
_SCP_LIKE = re.compile(r"^[A-Za-z0-9._][A-Za-z0-9._-]*@[A-Za-z0-9.][A-Za-z0-9.-]*:[^/].*$")


@dataclass(frozen=True)
class GitCredential:
    """An https token or an ssh deploy key (the private key's text), never both; neither
    shows in ``repr`` (a credential in a log line or a traceback's locals)."""

    token: str | None = field(default=None, repr=False)
    ssh_key: str | None = field(default=None, repr=False)

    def __repr__(self) -> str:
        held = "token" if self.token else "ssh_key" if self.ssh_key else "nothing"
        return f"GitCredential(<{held} hidden>)"


def check_git_url(url: str) -> str:
    """Accept https, ssh (``ssh://`` or ``git@host:path``) and ``file://`` URLs without a
    password in them; anything else is a clear error (``ext::`` would run a command, a
    leading ``-`` would be read as an option). Where the URL may lead is ``git_target``'s."""
    if url.startswith("-"):
        raise SourceSyncError(url[:40], "a git URL may not start with '-'", code="source_invalid")
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
    credential: GitCredential | None, known_hosts: Path, target: GitTarget | None = None
) -> Iterator[dict[str, str]]:
    """The environment for git commands of one sync; a key file lives only inside the block.

    Without ``target`` git may use no transport (local commands); with it, only the target's
    own, its host pinned to the checked addresses and the token sent to its origin alone.
    """
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(
        {
            "GIT_TERMINAL_PROMPT": "0",
            # Submodules, redirects and lazy fetches included: never ext:: or fd::, and no
            # transport but the checked one.
            "GIT_ALLOW_PROTOCOL": "" if target is None else target.protocol,
            # Neither the host's nor the service account's git config (credential helpers,
            # URL rewrites) takes part: only what this source says.
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": os.devnull,
            "LC_ALL": "C",
        }
    )
    config = list(target.config) if target is not None else []
    if target is not None and target.origin is not None and credential is not None:
        if credential.token:
            basic = base64.b64encode(f"x-access-token:{credential.token}".encode()).decode()
            config.append((f"http.{target.origin}.extraHeader", f"Authorization: Basic {basic}"))
    if config:
        env["GIT_CONFIG_COUNT"] = str(len(config))
        for index, (name, value) in enumerate(config):
            env[f"GIT_CONFIG_KEY_{index}"] = name
            env[f"GIT_CONFIG_VALUE_{index}"] = value
    with tempfile.TemporaryDirectory(prefix="runbook-git-") as private:
        ssh = [
            "ssh",
            "-o IdentitiesOnly=yes",
            "-o StrictHostKeyChecking=accept-new",
            f"-o UserKnownHostsFile={shlex.quote(str(known_hosts))}",
            "-o BatchMode=yes",
            "-o ConnectTimeout=20",
        ]
        if target is not None and target.ssh_address is not None:
            # The checked address; known_hosts still keys the host key by the URL's name.
            ssh.append(f"-o HostName={shlex.quote(target.ssh_address)}")
        if credential is not None and credential.ssh_key:
            key_file = Path(private) / "deploy_key"
            fd = os.open(key_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w") as key:
                key.write(credential.ssh_key.rstrip("\n") + "\n")
            ssh.insert(1, f"-i {shlex.quote(str(key_file))}")
        env["GIT_SSH_COMMAND"] = " ".join(ssh)
        yield env


def remote_default_branch(
    source: str, url: str, credential: GitCredential | None, *, access: SourceAccess
) -> str:
    """The branch the remote's ``HEAD`` points at (``git ls-remote --symref URL HEAD``), the
    URL checked against ``access`` first.

    Raises ``SourceSyncError`` when the remote cannot be read or names no default branch (an
    empty repository, a dumb-http server): both say to pass ``--branch``.
    """
    target = git_target(source, url, access)
    with tempfile.TemporaryDirectory(prefix="runbook-git-") as scratch:
        # A throwaway known_hosts: the source's own cache pins the host key at its first sync.
        with git_environment(credential, Path(scratch) / "known_hosts", target) as env:
            listed = run_git(
                source,
                ["ls-remote", "--symref", "--", url, "HEAD"],
                env=env,
                cwd=Path(scratch),
                timeout_s=LS_REMOTE_TIMEOUT_S,
            )
    for line in listed.decode("utf-8", "replace").splitlines():
        points_at, _, name = line.partition("\t")
        if name == "HEAD" and points_at.startswith("ref: refs/heads/"):
            return points_at.removeprefix("ref: refs/heads/")
    raise SourceSyncError(
        source,
        "the repository names no default branch (is it empty?); pass --branch",
        code="source_not_found",
    )


def remote_has_branch(
    source: str,
    url: str,
    credential: GitCredential | None,
    branch: str,
    *,
    access: SourceAccess,
) -> bool:
    """Whether the remote has ``branch`` (``git ls-remote --heads URL BRANCH``), the URL checked
    against ``access`` first; an unreadable remote raises ``SourceSyncError`` as a sync would
    (auth, unreachable, not found, refused)."""
    target = git_target(source, url, access)
    with tempfile.TemporaryDirectory(prefix="runbook-git-") as scratch:
        with git_environment(credential, Path(scratch) / "known_hosts", target) as env:
            listed = run_git(
                source,
                ["ls-remote", "--heads", "--", url, f"refs/heads/{branch}"],
                env=env,
                cwd=Path(scratch),
                timeout_s=LS_REMOTE_TIMEOUT_S,
            )
    return bool(listed.strip())


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
    redirect = re.search(r"the requested url returned error: (30[12378])", lowered)
    if redirect is not None:
        return SourceSyncError(
            source,
            f"the repository redirected (HTTP {redirect.group(1)}); sources follow no redirect "
            "(it would take the credential elsewhere): give the address it redirects to",
            code="source_not_found",
        )
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
    """git's last ``fatal:`` line, without what the server said: the message becomes the
    source's last error, shown to the tenant, and a server (or an internal service answering
    by mistake) may say anything — so no ``remote:`` line and no quoted answer is kept."""
    lines = [
        line.strip()
        for line in stderr.splitlines()
        if line.strip() and not line.strip().lower().startswith("remote:")
    ]
    fatal = [line for line in lines if line.lower().startswith(("fatal:", "error:"))]
    line = (fatal or lines or ["no message"])[-1]
    # A quoted URL is the source's own; any other quoted text is the server's.
    line = re.sub(r"'(?![a-z][a-z0-9+.-]*://)[^']*'", "'…'", line)
    # Userinfo in a URL git echoes back (never ours: add refuses URLs with a password).
    return re.sub(r"://[^/@\s]+@", "://", line)[:300]
