"""Reading fields out of Confluence's JSON answers, refusing ones of the wrong shape.

A missing or mistyped field raises ``MalformedAnswer``; ``rag.sources.confluence.client`` turns it
into a
``ConfluenceResponseError`` naming the space, so no ``KeyError`` ever leaves the client.
"""

from __future__ import annotations

import datetime as dt
from typing import Any
from urllib.parse import urlsplit

from rag.sources.confluence.space import ConfluenceSpace


class MalformedAnswer(Exception):
    """A Confluence answer without a field the client needs (internal to the client)."""


def results_of(answer: dict[str, Any], *, subject: str) -> list[dict[str, Any]]:
    results = answer.get("results")
    if not isinstance(results, list) or not all(isinstance(item, dict) for item in results):
        raise MalformedAnswer(f"{subject}: the answer has no list of results")
    return results


def object_field(item: dict[str, Any], name: str, *, subject: str) -> dict[str, Any]:
    value = item.get(name)
    if not isinstance(value, dict):
        raise MalformedAnswer(f"{subject}: no {name!r} object in the answer")
    return value


def text_field(item: dict[str, Any], name: str, *, subject: str, allow_empty: bool = False) -> str:
    value = item.get(name)
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str) or not (allow_empty or value.strip()):
        raise MalformedAnswer(f"{subject}: no {name!r} text in the answer")
    return value


def integer_field(item: dict[str, Any], name: str, *, subject: str) -> int:
    value = item.get(name)
    if not isinstance(value, int) or isinstance(value, bool):
        raise MalformedAnswer(f"{subject}: no {name!r} number in the answer")
    return value


def timestamp_field(item: dict[str, Any], name: str, *, subject: str) -> dt.datetime:
    """An ISO 8601 time (Cloud's ``…Z``, Data Center's ``…+02:00``) as an aware UTC datetime."""
    text = text_field(item, name, subject=subject)
    try:
        when = dt.datetime.fromisoformat(text)
    except ValueError as exc:
        raise MalformedAnswer(f"{subject}: {name!r} is not a time") from exc
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.UTC)
    return when.astimezone(dt.UTC)


def page_url(space: ConfluenceSpace, page: dict[str, Any]) -> str:
    """The page's web address: ``_links.webui`` under the site's own ``_links.base`` if given."""
    links = page.get("_links")
    if not isinstance(links, dict) or not isinstance(links.get("webui"), str):
        raise MalformedAnswer(f"page {page.get('id')}: no web link in the answer")
    base = links.get("base")
    if not isinstance(base, str) or urlsplit(base).scheme not in ("http", "https"):
        base = space.base_url
    return base.rstrip("/") + "/" + str(links["webui"]).lstrip("/")
