"""What a source may reach: public https addresses only, unless the operator allows more.

A source's URL is a tenant's input, fetched by the server on a schedule and partly shown back
(errors, titles): without a rule it reads the cloud metadata service or an internal admin page.
The rule is checked twice: when a source is added (scheme, host name, what the name resolves to
now) and at every connection (the address actually connected to, so a DNS change after ``add``
or a redirect cannot move a source inside). Two operator settings relax it, nothing else:

- ``RUNBOOK_SOURCE_ALLOW_PRIVATE_NETWORKS=true``: loopback and private addresses (10/8,
  172.16/12, 192.168/16, 100.64/10, fc00::/7, internal names), and plain ``http://`` to them,
  for a self-hosted Confluence or GitLab inside the network. Link-local addresses (the metadata
  service at 169.254.169.254), multicast and unspecified ones stay refused even then.
- ``RUNBOOK_SOURCE_ALLOW_FILE=true``: ``file://`` git sources, for tests and local trials, never
  a path inside the bot's data directory (its source caches hold other tenants' runbooks).
"""

from __future__ import annotations

import ipaddress
import socket
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlsplit

from rag.errors import SourceSyncError
from rag.settings import Settings

ALLOW_PRIVATE_SETTING = "RUNBOOK_SOURCE_ALLOW_PRIVATE_NETWORKS"
ALLOW_FILE_SETTING = "RUNBOOK_SOURCE_ALLOW_FILE"
REFUSED = "source_address_refused"

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
# Names that only mean something inside a network (RFC 6761/6762, ICANN's .internal).
_INTERNAL_SUFFIXES = (".localhost", ".local", ".internal", ".intranet", ".lan", ".home.arpa")


@dataclass(frozen=True)
class SourceAccess:
    """The operator's allowances; the default allows public https (and ssh) addresses alone."""

    allow_private_networks: bool = False
    allow_file: bool = False
    data_dir: Path | None = None

    @classmethod
    def from_settings(cls, settings: Settings) -> SourceAccess:
        """What sources may reach, from the operator's two allowances."""
        return cls(
            allow_private_networks=settings.source_allow_private_networks,
            allow_file=settings.source_allow_file,
            data_dir=settings.data_dir,
        )

    def address_refusal(self, address: str, *, plain_http: bool = False) -> str | None:
        """Why a connection to ``address`` is refused (None: allowed). ``plain_http``: the
        connection would carry http://, which only a private address may."""
        try:
            ip = ipaddress.ip_address(address.split("%", 1)[0])
        except ValueError:
            return f"{address!r} is not an IP address"
        ip = _embedded_ipv4(ip)
        kind = _non_public_kind(ip)
        if kind in ("link-local", "multicast", "unspecified", "reserved"):
            article = "an" if kind[0] in "aeiou" else "a"
            return f"{ip} is {article} {kind} address, which sources never reach"
        if kind is None:
            if plain_http:
                return (
                    f"plain http:// to the public address {ip}: use https:// (plain http is "
                    f"allowed only to private addresses, with {ALLOW_PRIVATE_SETTING}=true)"
                )
            return None
        if self.allow_private_networks:
            return None
        return f"{ip} is a {kind} address; {_PRIVATE_HINT}"

    def check_host(self, source: str, host: str, port: int, *, plain_http: bool) -> list[str]:
        """The addresses ``host`` resolves to now, each allowed; else ``SourceSyncError``
        (``source_address_refused``, or ``source_unreachable`` when the name does not resolve)."""
        self.check_name(source, host, plain_http=plain_http)
        addresses = resolve(source, host, port)
        for address in addresses:
            refusal = self.address_refusal(address, plain_http=plain_http)
            if refusal is not None:
                raise SourceSyncError(source, f"refused: {host} → {refusal}", code=REFUSED)
        return addresses

    def check_name(self, source: str, host: str, *, plain_http: bool) -> None:
        """The checks that need no DNS: an IP literal's kind, an internal name, plain http."""
        if not host or host.startswith("-"):
            raise SourceSyncError(source, f"{host!r} is not a host name", code=REFUSED)
        try:
            ipaddress.ip_address(host.split("%", 1)[0])
        except ValueError:
            literal = False
        else:
            literal = True
        if literal:
            refusal = self.address_refusal(host, plain_http=plain_http)
            if refusal is not None:
                raise SourceSyncError(source, f"refused: {refusal}", code=REFUSED)
            return
        name = host.rstrip(".").lower()
        internal = "." not in name or name == "localhost" or name.endswith(_INTERNAL_SUFFIXES)
        if internal and not self.allow_private_networks:
            raise SourceSyncError(
                source, f"refused: {host} is an internal name; {_PRIVATE_HINT}", code=REFUSED
            )
        if plain_http and not self.allow_private_networks:
            raise SourceSyncError(
                source,
                "refused: plain http:// — use https://; plain http is allowed only to private "
                f"addresses, with {ALLOW_PRIVATE_SETTING}=true",
                code=REFUSED,
            )

    def check_http_url(self, source: str, url: str) -> None:
        """An http(s) URL of a source (a Confluence base URL): its scheme and host, and what
        the host resolves to now (a name that does not resolve yet passes: every connection
        checks the address it reaches)."""
        parts = urlsplit(url)
        if parts.scheme not in ("https", "http"):
            raise SourceSyncError(source, "the URL must start with https://", code=REFUSED)
        try:
            port = _port(parts.port, parts.scheme)
        except ValueError:
            raise SourceSyncError(source, "the URL's port is not a number", code=REFUSED) from None
        plain_http = parts.scheme == "http"
        try:
            self.check_host(source, parts.hostname or "", port, plain_http=plain_http)
        except SourceSyncError as exc:
            if exc.code == REFUSED:
                raise

    def check_file_url(self, source: str, url: str) -> Path:
        """A ``file://`` git URL: allowed by the operator, and outside the data directory."""
        if not self.allow_file:
            raise SourceSyncError(
                source,
                f"refused: file:// sources are for tests and local trials; the operator "
                f"allows them with {ALLOW_FILE_SETTING}=true",
                code=REFUSED,
            )
        parts = urlsplit(url)
        if parts.netloc not in ("", "localhost"):
            raise SourceSyncError(source, "a file:// URL names no host", code=REFUSED)
        path = Path(unquote(parts.path)).resolve()
        if self.data_dir is not None:
            data_dir = self.data_dir.resolve()
            if path == data_dir or path.is_relative_to(data_dir):
                raise SourceSyncError(
                    source,
                    "refused: a file:// source may not read the bot's data directory",
                    code=REFUSED,
                )
        return path


_PRIVATE_HINT = (
    f"sources reach public addresses only, unless the operator sets {ALLOW_PRIVATE_SETTING}=true"
)


def _embedded_ipv4(ip: IPAddress) -> IPAddress:
    """The IPv4 address an IPv6 one carries (mapped, 6to4, NAT64), which is where it leads."""
    if isinstance(ip, ipaddress.IPv4Address):
        return ip
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip.sixtofour is not None:
        return ip.sixtofour
    if ip in _NAT64:
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return ip


def _non_public_kind(ip: IPAddress) -> str | None:
    """Why ``ip`` is not a public unicast address (None when it is)."""
    if ip.is_unspecified or ip in _THIS_NETWORK:
        return "unspecified"
    if ip.is_link_local:
        return "link-local"
    if ip.is_multicast:
        return "multicast"
    if ip.is_loopback:
        return "loopback"
    if ip.is_private or ip in _SHARED:
        return "private"
    if ip.is_reserved or not ip.is_global:
        return "reserved"
    return None


_SHARED = ipaddress.ip_network("100.64.0.0/10")  # carrier-grade NAT, used inside networks too
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_THIS_NETWORK = ipaddress.ip_network("0.0.0.0/8")  # "this host": 0.x reaches the local machine


def _port(port: int | None, scheme: str) -> int:
    return port if port is not None else {"https": 443, "http": 80, "ssh": 22}.get(scheme, 443)


def resolve(source: str, host: str, port: int) -> list[str]:
    """Every address ``host`` resolves to (TCP), in the resolver's order."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as exc:
        raise SourceSyncError(
            source, f"cannot resolve {host} ({type(exc).__name__})", code="source_unreachable"
        ) from exc
    addresses: list[str] = []
    for info in infos:
        address = str(info[4][0])
        if address not in addresses:
            addresses.append(address)
    return addresses
