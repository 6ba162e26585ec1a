"""Where a source added from a chat surface may point, said as a sentence for the form's URL
field. The reach itself is the rule every connection of a source obeys (``rag.SourceAccess``:
public https only, unless the operator allowed private networks or ``file://``), checked on
what the host resolves to now; the form adds what only a person typing a URL needs told (a
token pasted into the URL, a scheme no source speaks) and, unlike ``runbook source add``,
refuses a name that does not resolve, since the admin is there to correct it.
"""

from __future__ import annotations

import asyncio
import re
from urllib.parse import urlsplit

from rag import SourceAccess, SourceSyncError, git_target

_SCP_LIKE = re.compile(r"^[A-Za-z0-9._-]+@(?P<host>[A-Za-z0-9.-]+):[^/].*$")
_FORM = "the form"  # the source has no name yet when its URL is checked


async def url_problem(url: str, access: SourceAccess, *, git: bool) -> str | None:
    """Why ``url`` may not be a source (a sentence for the form's field), or None."""
    if not (git and _SCP_LIKE.match(url)):
        parts = urlsplit(url)
        scheme = parts.scheme.lower()
        if scheme == "file" and not git:
            return "file:// sources are not allowed on this server"
        allowed = ("https", "http", "ssh", "file") if git else ("https", "http")
        if scheme not in allowed:
            return "use an https:// URL" + (" (or ssh:// with a deploy key)" if git else "")
        if parts.username or parts.password:
            return "put the token in the token field, not in the URL"
        if not parts.hostname and scheme != "file":
            return "the URL names no host"
    try:
        # Resolving the host is a blocking getaddrinfo: off the event loop.
        await asyncio.to_thread(_check_reach, url, access, git=git)
    except SourceSyncError as exc:
        if exc.code == "source_unreachable":
            host = _host(url)
            return f"cannot resolve {host}: check the address"
        return exc.reason.removeprefix("refused: ")
    return None


def _check_reach(url: str, access: SourceAccess, *, git: bool) -> None:
    if git:
        git_target(_FORM, url, access)
        return
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    try:
        port = parts.port or (443 if scheme == "https" else 80)
    except ValueError:
        raise SourceSyncError(
            _FORM, "the URL's port is not a number", code="source_invalid"
        ) from None
    access.check_host(_FORM, parts.hostname or "", port, plain_http=scheme == "http")


def _host(url: str) -> str:
    scp = _SCP_LIKE.match(url)
    return scp.group("host") if scp else urlsplit(url).hostname or url
