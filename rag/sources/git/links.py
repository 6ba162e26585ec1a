"""What a git repository says about a file besides its text: its web address at a commit
(GitHub, GitLab) and its owner in CODEOWNERS."""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import quote, urlsplit

# Where GitHub and GitLab look for the file; the first one present is used.
CODEOWNERS_PATHS = ("CODEOWNERS", ".github/CODEOWNERS", ".gitlab/CODEOWNERS", "docs/CODEOWNERS")

_SCP_LIKE = re.compile(r"^[^@/]+@(?P<host>[^:/]+):(?P<path>.+)$")


def web_url(clone_url: str, commit: str, path: str) -> str | None:
    """The file's page at ``commit`` on GitHub or GitLab (also self-hosted ``gitlab.*`` and
    ``github.*`` hosts); None for other hosts and local repositories."""
    located = _host_and_repo(clone_url)
    if located is None:
        return None
    host, repo = located
    quoted = quote(path)
    if host == "github.com" or host.startswith("github."):
        return f"https://{host}/{repo}/blob/{commit}/{quoted}"
    if host == "gitlab.com" or host.startswith("gitlab.") or ".gitlab." in host:
        return f"https://{host}/{repo}/-/blob/{commit}/{quoted}"
    return None


def _host_and_repo(clone_url: str) -> tuple[str, str] | None:
    scp = _SCP_LIKE.match(clone_url)
    if scp is not None and "://" not in clone_url:
        host, path = scp.group("host"), scp.group("path")
    else:
        parts = urlsplit(clone_url)
        if parts.scheme not in ("https", "http", "ssh") or not parts.hostname:
            return None
        host, path = parts.hostname, parts.path
    repo = path.strip("/").removesuffix(".git")
    return (host.lower(), repo) if repo else None


@dataclass(frozen=True)
class OwnerRule:
    pattern: re.Pattern[str]
    owner: str


def parse_codeowners(text: str) -> list[OwnerRule]:
    """The rules of a CODEOWNERS file in order (the last match wins); a rule's owner is its
    first one. GitLab's ``[Section]`` headers and rules without owners are passed over."""
    rules: list[OwnerRule] = []
    for raw in text.splitlines():
        line = raw.split(" #", 1)[0].strip()
        if not line or line.startswith(("#", "[", "^[")):
            continue
        fields = line.split()
        if len(fields) < 2:
            continue
        rules.append(OwnerRule(_pattern(fields[0]), fields[1]))
    return rules


def owner_of(rules: list[OwnerRule], path: str) -> str | None:
    owner = None
    for rule in rules:
        if rule.pattern.match(path):
            owner = rule.owner
    return owner


def _pattern(glob: str) -> re.Pattern[str]:
    """gitignore-style: anchored when it has a ``/`` before its end, a folder matches all
    beneath it, ``*`` stays within a folder, ``**`` crosses folders."""
    anchored = "/" in glob.rstrip("/")
    body = glob.strip("/")
    out = []
    index = 0
    while index < len(body):
        if body.startswith("**/", index):
            out.append("(?:.*/)?")
            index += 3
        elif body.startswith("**", index):
            out.append(".*")
            index += 2
        elif body[index] == "*":
            out.append("[^/]*")
            index += 1
        elif body[index] == "?":
            out.append("[^/]")
            index += 1
        else:
            out.append(re.escape(body[index]))
            index += 1
    prefix = "" if anchored else "(?:.*/)?"
    return re.compile(f"^{prefix}{''.join(out)}(?:/.*)?$")
