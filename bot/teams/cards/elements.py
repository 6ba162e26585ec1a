"""Adaptive Card 1.5 building blocks and the text safety every Teams card relies on.

Untrusted text (runbooks, alerts, model output) only ever goes into ``TextRun``s, which Teams
renders verbatim (no Markdown, no HTML); ``<at>`` tags are removed from it as well, so no text
can ping anyone. Our own fixed wording uses ``TextBlock`` Markdown.
"""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import urlsplit

ADAPTIVE_CARD = "application/vnd.microsoft.card.adaptive"
VERSION = "1.5"  # Action.Execute needs 1.5; Teams renders nothing newer in bot messages
ELLIPSIS = "…"
# Whole outgoing activity, as the connector client serialises it (ASCII-escaped JSON). Teams
# documents larger limits today, but 28 KB is the smallest one still in force somewhere.
MAX_ACTIVITY_BYTES = 28_000
# Room for the envelope around the card: ids, service URL, from/recipient, channel data.
ENVELOPE_BYTES = 2_500
CARD_BUDGET_BYTES = MAX_ACTIVITY_BYTES - ENVELOPE_BYTES
URL_MAX = 500

Json = dict[str, Any]

_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_AT_TAG = re.compile(r"</?at(?:\s[^>]*)?>", re.IGNORECASE)


def neutral(text: str | None) -> str:
    """Untrusted multi-line text without control characters or ``<at>`` mention tags."""
    return _AT_TAG.sub("", _CONTROLS.sub("", text or ""))


def one_line(text: str | None) -> str:
    """Untrusted text for a label or name: neutral, one line, whitespace collapsed."""
    return " ".join(neutral(_CONTROLS.sub(" ", text or "")).split())


def clip(text: str, limit: int) -> str:
    """``text`` within ``limit`` characters, ending in a visible "…" when anything was cut."""
    if len(text) <= limit:
        return text
    return text[: max(0, limit - 1)].rstrip() + ELLIPSIS


def safe_url(url: str | None) -> str | None:
    """``url`` when it is a short plain http(s) URL, else None (never a javascript: link)."""
    if not url or len(url) > URL_MAX or any(c.isspace() or ord(c) < 32 for c in url):
        return None
    try:
        parts = urlsplit(url)
    except ValueError:
        return None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return None
    return url


def text_block(text: str, **style: Any) -> Json:
    """Our own wording (Markdown allowed): never pass untrusted text here."""
    return {"type": "TextBlock", "text": text, "wrap": True, **style}


def run(text: str, **style: Any) -> Json:
    """A verbatim piece of text: Teams shows it exactly, Markdown and HTML included."""
    return {"type": "TextRun", "text": neutral(text), **style}


def link_run(text: str, url: str | None, **style: Any) -> Json:
    """A verbatim run that opens ``url`` when it is safe; plain text otherwise."""
    element = run(text, **style)
    if target := safe_url(url):
        element["selectAction"] = {"type": "Action.OpenUrl", "url": target}
    return element


def rich_text(*inlines: Json, **style: Any) -> Json:
    return {"type": "RichTextBlock", "inlines": list(inlines), **style}


def adaptive_card(body: list[Json], actions: list[Json] | None = None) -> Json:
    card: Json = {"type": "AdaptiveCard", "version": VERSION, "msteams": {"width": "Full"}}
    card["body"] = body
    if actions:
        card["actions"] = actions
    return card


def execute(verb: str, title: str, data: Json) -> Json:
    """``Action.Execute`` with an ``Action.Submit`` fallback for clients without it."""
    return {
        "type": "Action.Execute",
        "verb": verb,
        "title": title,
        "data": data,
        "fallback": {"type": "Action.Submit", "title": title, "data": {"verb": verb, **data}},
    }


def attachment(card: Json) -> Json:
    return {"contentType": ADAPTIVE_CARD, "content": card}


def card_bytes(card: Json) -> int:
    """Bytes the card takes in an activity, serialised as the connector client does."""
    return len(json.dumps(attachment(card)).encode())


def fits(card: Json) -> bool:
    return card_bytes(card) <= CARD_BUDGET_BYTES
