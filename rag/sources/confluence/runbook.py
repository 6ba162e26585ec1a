"""A Confluence page as a runbook: its storage body read like any HTML runbook, its page
metadata (ancestors, labels, version, author, web address) as the runbook's metadata."""

from __future__ import annotations

from rag.formats import parse_confluence_storage
from rag.formats.runbook import Frontmatter, ParsedRunbook, Section
from rag.sources.confluence.space import ConfluencePage, ConfluenceSpace

SERVICE_LABEL_PREFIX = "service-"


def page_runbook(page: ConfluencePage) -> ParsedRunbook:
    """The page's sections under the breadcrumb ``ancestors › title › headings``.

    Labels become tags, and a ``service-X`` label names the service (the first, alphabetically,
    when a page has several). Raises ``EmptyRunbookError`` for a page with no text and
    ``RunbookFormatError`` for one that cannot be read.
    """
    parsed = parse_confluence_storage(page.body, title=page.title)
    services = sorted(
        label.removeprefix(SERVICE_LABEL_PREFIX)
        for label in page.labels
        if label.startswith(SERVICE_LABEL_PREFIX) and label != SERVICE_LABEL_PREFIX
    )
    frontmatter = Frontmatter(
        title=parsed.title,
        service=services[0] if services else None,
        tags=page.labels,
        owner=page.author,
        url=page.web_url,
        updated=page.updated.isoformat(),
    )
    ancestors = tuple(" ".join(title.split()) for title in page.ancestors if title.strip())
    return ParsedRunbook(
        frontmatter=frontmatter,
        title=parsed.title,
        sections=tuple(
            Section(heading_path=(*ancestors, *section.heading_path), text=section.text)
            for section in parsed.sections
        ),
        has_headings=parsed.has_headings,
    )


def confluence_document_id(space: ConfluenceSpace, page_id: str) -> str:
    """``confluence/<page id>``, the identity rule of docs/architecture.md.

    The space key is deliberately not part of it: page ids are unique within a site, and a page
    moved to another synced space of the tenant stays the same document (its answers and
    feedback keep pointing at it) instead of being retired and added again.
    """
    return f"confluence/{page_id}"
