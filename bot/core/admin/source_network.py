"""Where a source added from a chat surface may point: public https only, unless the operator
allowed more (``RUNBOOK_SOURCE_ALLOW_PRIVATE_NETWORKS``: loopback and private addresses and
plain http to them; ``RUNBOOK_SOURCE_ALLOW_FILE``: ``file://`` git sources). The host is
resolved and every address it resolves to is checked, so a public name for a private address
is refused too.
"""

from __future__ import annotations

import asyncio
import ipaddress
import re
import socket
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from rag import Settings, SourceAccess

_SCP_LIKE = re.compile(r"^[A-Za-z0-9._-]+@(?P<host>[A-Za-z0-9.-]+):[^/].*$")


@dataclass(frozen=True)
class NetworkRules:
    allow_private: bool = False
    allow_file: bool = False
    data_dir: Path | None = None

    @classmethod
    def from_settings(cls, settings: Settings) -> NetworkRules:
        # The operator allowances of issue 36 (rag/sources/access.py).
        return cls(
            allow_private=settings.source_allow_private_networks,
            allow_file=settings.source_allow_file,
            data_dir=settings.data_dir,
        )

    @property
    def access(self) -> SourceAccess:
        """The same allowances as the rule every connection of a source obeys."""
        return SourceAccess(
            allow_private_networks=self.allow_private,
            allow_file=self.allow_file,
            data_dir=self.data_dir,
        )


async def url_problem(url: str, rules: NetworkRules, *, git: bool) -> str | None:
    """Why ``url`` may not be a source (a sentence for the form's field), or None."""
    scp = _SCP_LIKE.match(url) if git else None
    if scp:
        return await _host_problem(scp.group("host"), rules)
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme == "file":
        if git and rules.allow_file:
            return None
        return "file:// sources are not allowed on this server"
    allowed = ("https", "http", "ssh") if git else ("https", "http")
    if scheme not in allowed:
        return "use an https:// URL" + (" (or ssh:// with a deploy key)" if git else "")
    if parts.username or parts.password:
        return "put the token in the token field, not in the URL"
    if not parts.hostname:
        return "the URL names no host"
    problem = await _host_problem(parts.hostname, rules)
    if problem is None and scheme == "http" and not rules.allow_private:
        return "use https:// (plain http is allowed only to private addresses the operator allowed)"
    if scheme == "http" and rules.allow_private and not await _all_private(parts.hostname):
        return "use https:// for a public host"
    return problem


async def _host_problem(host: str, rules: NetworkRules) -> str | None:
    addresses = await _resolve(host)
    if addresses is None:
        return f"cannot resolve {host}: check the address"
    if rules.allow_private:
        return None
    if any(not address.is_global for address in addresses):
        return f"{host} is a private or local address; this server only reaches public hosts"
    return None


async def _all_private(host: str) -> bool:
    addresses = await _resolve(host)
    return bool(addresses) and all(not a.is_global for a in addresses or [])


async def _resolve(host: str) -> list[ipaddress.IPv4Address | ipaddress.IPv6Address] | None:
    try:
        return [ipaddress.ip_address(host.strip("[]"))]
    except ValueError:
        pass
    try:
        infos = await asyncio.get_running_loop().getaddrinfo(host, None, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError):
        return None
    return [ipaddress.ip_address(str(info[4][0]).split("%")[0]) for info in infos]
