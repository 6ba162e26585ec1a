"""Where a tenant's drafted runbook goes: the forge behind a git source (GitHub or GitLab, its
API base), a Confluence space, or, with no writable source, a file in the thread."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from pathlib import PurePosixPath
from urllib.parse import urlsplit

from rag import GitSourceSettings, SourceRow

_SCP = re.compile(r"^[\w.-]+@(?P<host>[^:/]+):(?P<path>.+)$")


@dataclass(frozen=True)
class ForgeTarget:
    """A git source's repository on its forge."""

    source: SourceRow
    forge: str  # "github" | "gitlab"
    api_url: str
    repo: str  # owner/name (GitHub) or group/…/name (GitLab)
    folder: str  # the source's --path

    def new_file(self, title: str, beside: list[str] = []) -> str:  # noqa: B006 (read only)
        """The path of a new runbook named for ``title``: in the source's folder, else in the
        folder most of its runbooks (``beside``, repository paths) are in."""
        name = re.sub(r"[^A-Za-z0-9._-]+", "-", title).strip("-.") or "runbook"
        folder = self.folder
        if not folder and beside:
            parents = Counter(str(PurePosixPath(path).parent) for path in beside)
            folder = max(sorted(parents), key=lambda p: parents[p])
        return str(PurePosixPath(folder or ".", f"{name[:80]}.md")).removeprefix("./")

    def document_id(self, path: str) -> str:
        """The document id a sync will give ``path`` (relative to --path, no suffix)."""
        relative = (
            PurePosixPath(path).relative_to(self.folder) if self.folder else PurePosixPath(path)
        )
        return str(relative.with_suffix(""))


def forge_target(row: SourceRow) -> ForgeTarget | None:
    """The forge of a git source: ``--forge``/``--api-url`` when given, else github.com and
    gitlab.com (or a self-hosted ``github.*``/``gitlab.*`` host) from its URL; None for a
    repository on no known forge (a plain ``file://`` or ssh server)."""
    if row.kind != "git":
        return None
    settings = GitSourceSettings.model_validate(row.settings)
    host, path = _host_and_path(settings.url)
    if host is None:
        if not (settings.forge and settings.api_url):
            return None
        # A local mirror of a forge's repository (file://): its owner/name are its last folders.
        path = "/".join(urlsplit(settings.url).path.rstrip("/").split("/")[-2:])
    forge = settings.forge or _forge_of(host or "")
    if forge is None:
        return None
    api = settings.api_url or _default_api(forge, host or "", settings.url)
    repo = path.strip("/").removesuffix(".git")
    return ForgeTarget(row, forge, api.rstrip("/"), repo, settings.path)


def _host_and_path(url: str) -> tuple[str | None, str]:
    scp = _SCP.match(url)
    if scp:
        return scp["host"], scp["path"]
    parts = urlsplit(url)
    if parts.scheme not in ("https", "http", "ssh"):
        return None, ""
    return parts.hostname, parts.path


def _forge_of(host: str) -> str | None:
    first = host.split(".")[0]
    if host == "github.com" or first == "github":
        return "github"
    if host == "gitlab.com" or first == "gitlab":
        return "gitlab"
    return None


def _default_api(forge: str, host: str, url: str) -> str:
    scheme = "http" if url.startswith("http://") else "https"
    if forge == "github":
        return "https://api.github.com" if host == "github.com" else f"{scheme}://{host}/api/v3"
    return f"{scheme}://{host}/api/v4"
