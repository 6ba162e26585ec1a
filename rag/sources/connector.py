"""An aiohttp session whose every connection obeys ``SourceAccess``: the rule is applied to
the addresses a name resolves to and again to the address each socket connects to, so neither
a DNS answer that changed after ``source add`` nor an IP literal slips past it.

A refusal surfaces inside aiohttp's ``ClientConnectorError``; ``address_refusal_in`` finds it
so the caller records the refusal (naming the operator setting) instead of "cannot connect".
"""

from __future__ import annotations

import socket
from typing import TYPE_CHECKING

import aiohttp
from aiohttp.abc import AbstractResolver, ResolveResult
from aiohttp.resolver import ThreadedResolver

from rag.sources.access import SourceAccess

if TYPE_CHECKING:
    from aiohappyeyeballs import AddrInfoType


class RefusedAddress(OSError):
    """A connection the source access rule refuses (raised inside aiohttp's connector)."""


class _GuardedResolver(AbstractResolver):
    """The system resolver, refusing a name when any address it resolves to is refused."""

    def __init__(self, access: SourceAccess, *, plain_http: bool) -> None:
        self._access = access
        self._plain_http = plain_http
        self._inner = ThreadedResolver()

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        results = await self._inner.resolve(host, port, family)
        for result in results:
            refusal = self._access.address_refusal(result["host"], plain_http=self._plain_http)
            if refusal is not None:
                raise RefusedAddress(f"refused: {host} → {refusal}")
        return results

    async def close(self) -> None:
        await self._inner.close()


def guarded_session(
    access: SourceAccess, *, plain_http: bool, timeout: aiohttp.ClientTimeout
) -> aiohttp.ClientSession:
    """A session for one source; ``plain_http`` when its base URL is ``http://``."""

    def connect_socket(addr_info: AddrInfoType) -> socket.socket:
        family, kind, proto, _, address = addr_info
        refusal = access.address_refusal(str(address[0]), plain_http=plain_http)
        if refusal is not None:
            raise RefusedAddress(f"refused: {refusal}")
        return socket.socket(family=family, type=kind, proto=proto)

    connector = aiohttp.TCPConnector(
        resolver=_GuardedResolver(access, plain_http=plain_http), socket_factory=connect_socket
    )
    # trust_env stays off: no proxy from the environment resolves names behind the rule's back.
    return aiohttp.ClientSession(connector=connector, timeout=timeout)


def address_refusal_in(exc: BaseException) -> str | None:
    """The refusal behind a connection error, if the access rule caused it."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, RefusedAddress):
            return str(seen)
        if isinstance(seen, aiohttp.ClientConnectorError):
            if isinstance(seen.os_error, RefusedAddress):
                return str(seen.os_error)
        seen = seen.__cause__ or seen.__context__
    return None
