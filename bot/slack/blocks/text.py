"""Text safety for Block Kit: mrkdwn escaping, clipping to Slack's limits, links we build."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from slack_sdk.models.blocks import MarkdownTextObject

ELLIPSIS = "…"
# A citation link must stay short: it is counted against the message budget and a runbook URL
# longer than this is more likely junk than a page anyone should open mid-incident.
URL_MAX = 300

# C0/C1 controls other than tab and newline: they render as nothing or garbage in Slack.
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
# Characters that would end or split a Slack `<url|label>` link, or smuggle in a second one.
_URL_BREAKERS = re.compile(r"[\s<>|\x00-\x1f\x7f]")


def escape_mrkdwn(text: str) -> str:
    """Escape the three characters mrkdwn treats as control syntax (and nothing else)."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def clean(text: str) -> str:
    """Untrusted multi-line text without control characters (newlines and tabs kept)."""
    return _CONTROLS.sub("", text)


def one_line(text: str | None) -> str:
    """Untrusted text for a title, label or name: one line, runs of whitespace collapsed."""
    return " ".join(_CONTROLS.sub(" ", text or "").split())


def units(text: str) -> int:
    """Length in UTF-16 code units: never less than what Slack or slack_sdk count."""
    return len(text.encode("utf-16-le")) // 2


def _prefix(text: str, limit: int) -> str:
    """The longest prefix within ``limit`` units that does not end inside an ``&entity;``."""
    count = 0
    for index, char in enumerate(text):
        count += 2 if ord(char) > 0xFFFF else 1
        if count > limit:
            text = text[:index]
            break
    # In escaped text every "&" opens an entity of at most five characters.
    amp = text.rfind("&", max(0, len(text) - 4))
    if amp != -1 and ";" not in text[amp:]:
        text = text[:amp]
    return text


def clip(text: str, limit: int) -> str:
    """``text`` within ``limit`` units, ending in a visible "…" when anything was cut."""
    if units(text) <= limit:
        return text
    return _prefix(text, limit - 1).rstrip() + ELLIPSIS


def split_chunks(text: str, size: int) -> list[str]:
    """Non-empty pieces of at most ``size`` units, cut at a paragraph, line or word if possible."""
    chunks: list[str] = []
    text = text.strip()
    while units(text) > size:
        head = _prefix(text, size)
        cut = len(head)
        for separator in ("\n\n", "\n", ". ", " "):
            found = head.rfind(separator)
            # Only a break in the second half: an early one would waste most of a section.
            if found >= len(head) // 2:
                cut = found + (1 if separator == ". " else 0)
                break
        chunks.append(text[:cut].rstrip())
        text = text[cut:].lstrip()
    if text:
        chunks.append(text)
    return [chunk for chunk in chunks if chunk]


def safe_url(url: str | None) -> str | None:
    """``url`` if it is a short, plain http(s) URL that cannot break out of a Slack link."""
    if not url or units(escape_mrkdwn(url)) > URL_MAX or _URL_BREAKERS.search(url):
        return None
    try:
        parts = urlsplit(url)
    except ValueError:  # e.g. an unclosed IPv6 bracket
        return None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return None
    return url


def link(url: str | None, label: str) -> str:
    """``label`` (already escaped) linked to ``url`` when the URL is safe, else left plain."""
    safe = safe_url(url)
    return f"<{escape_mrkdwn(safe)}|{label}>" if safe else label


def mrkdwn(text: str) -> MarkdownTextObject:
    # verbatim: no auto-linking of URLs, channel names or mentions in what we pass through.
    return MarkdownTextObject(text=text, verbatim=True)
