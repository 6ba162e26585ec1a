"""Where a git source's URL leads, checked against ``SourceAccess`` before git runs, and the
git configuration that keeps git there.

git resolves names and follows redirects itself, so the check pins what it checked: an
https/http host to the addresses just resolved (``http.curloptResolve``), an ssh host to its
address (``-o HostName=``), and no redirect is followed (``http.followRedirects=false``: a
redirect would move the fetch, and its ``Authorization`` header, to a host nobody checked).
The token header is scoped to the source's own origin (``http.<origin>/.extraHeader``), and
git may speak the URL's own transport alone (``GIT_ALLOW_PROTOCOL``).
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from urllib.parse import urlsplit

from rag.errors import SourceSyncError
from rag.sources.access import SourceAccess

_SCP_LIKE = re.compile(r"^(?P<user>[A-Za-z0-9._][A-Za-z0-9._-]*)@(?P<host>[A-Za-z0-9.-]+):[^/].*$")


@dataclass(frozen=True)
class GitTarget:
    """A checked git URL: the transport git may use and the settings that pin its host."""

    url: str
    protocol: str
    # ``scheme://host[:port]/`` of an http(s) URL: where the token header may go.
    origin: str | None = None
    config: tuple[tuple[str, str], ...] = ()
    ssh_address: str | None = None


def git_target(source: str, url: str, access: SourceAccess) -> GitTarget:
    """``url`` checked (transport, host, the addresses it resolves to now) and pinned.

    Raises ``SourceSyncError``: ``source_address_refused`` with the operator setting that
    would allow it, ``source_unreachable`` when the host does not resolve, ``source_invalid``.
    """
    if url.startswith("-"):
        raise SourceSyncError(source, "a git URL may not start with '-'", code="source_invalid")
    scp = _SCP_LIKE.match(url)
    if scp is not None:
        host = scp.group("host")
        return GitTarget(url, "ssh", ssh_address=_pinned(source, access, host, 22, False)[0])
    parts = urlsplit(url)
    scheme = parts.scheme
    if scheme == "file":
        access.check_file_url(source, url)
        return GitTarget(url, "file")
    try:
        port = parts.port
    except ValueError:
        raise SourceSyncError(
            source, "the URL's port is not a number", code="source_invalid"
        ) from None
    host = parts.hostname or ""
    if scheme == "ssh":
        addresses = _pinned(source, access, host, port or 22, False)
        return GitTarget(url, "ssh", ssh_address=addresses[0])
    if scheme not in ("https", "http"):
        raise SourceSyncError(
            source,
            "the URL must be https://, ssh://, git@host:path or file://",
            code="source_invalid",
        )
    port = port or (443 if scheme == "https" else 80)
    addresses = _pinned(source, access, host, port, scheme == "http")
    config: list[tuple[str, str]] = [("http.followRedirects", "false")]
    if not _is_ip(host):
        listed = ",".join(f"[{a}]" if ":" in a else a for a in addresses)
        config.append(("http.curloptResolve", f"{host}:{port}:{listed}"))
    return GitTarget(
        url, scheme, origin=f"{scheme}://{parts.netloc}/", config=tuple(config), ssh_address=None
    )


def _pinned(source: str, access: SourceAccess, host: str, port: int, plain_http: bool) -> list[str]:
    if host.startswith("-"):
        raise SourceSyncError(source, "a git host may not start with '-'", code="source_invalid")
    return access.check_host(source, host, port, plain_http=plain_http)


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True
