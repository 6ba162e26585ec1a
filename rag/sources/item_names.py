"""Item ids a sync can store: a source's file names are bytes the tenant chose, and the
database (and every report) holds UTF-8 text only.

git lists a path that is not UTF-8 with Python's ``surrogateescape`` stand-ins; such an item
is passed over at listing, under a printable name (each raw byte as ``\\xNN``), rather than
failing the write that would otherwise meet it halfway through the sync.
"""

from __future__ import annotations

from dataclasses import replace

from rag.sources.reader import SourceListing

NOT_UTF8 = "file name is not valid UTF-8 (rename it to publish it)"


def is_storable(item_id: str) -> bool:
    """Whether ``item_id`` encodes as UTF-8 (no lone surrogates)."""
    try:
        item_id.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def printable_name(item_id: str) -> str:
    """``item_id`` as UTF-8 text: a raw byte becomes ``\\xNN``, a lone surrogate ``\\udNNN``."""
    try:
        raw = item_id.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a surrogate that stands for no byte (from JSON, say)
        return item_id.encode("utf-8", "backslashreplace").decode("utf-8")
    return raw.decode("utf-8", "backslashreplace")


def storable_listing(listing: SourceListing) -> SourceListing:
    """``listing`` with every item (listed or passed over) whose id is not UTF-8 passed over,
    under its printable name; the same listing when there is none."""
    unstorable = [item for item in (*listing.items, *listing.passed_over) if not is_storable(item)]
    if not unstorable:
        return listing
    passed_over = {
        (item if is_storable(item) else printable_name(item)): reason
        for item, reason in listing.passed_over.items()
    }
    for item in listing.items:
        if not is_storable(item):
            passed_over[printable_name(item)] = NOT_UTF8
    items = {item: version for item, version in listing.items.items() if is_storable(item)}
    return replace(listing, items=items, passed_over=passed_over)
