"""HTML runbooks and Confluence storage-format pages, through one lenient HTML parser (libxml2).

Storage format is XHTML with ``ac:``/``ri:`` elements, CDATA code bodies and HTML entities that
are not XML-safe, and real pages are often malformed: an XML parser refuses them, so libxml2's
HTML parser (which keeps the prefixed tags as they are) reads them after CDATA sections have been
turned into escaped text, the one construct HTML parsing does not know.
"""

from __future__ import annotations

import html
import re

from lxml import etree

from rag.errors import RunbookFormatError
from rag.formats.blocks import Heading, assemble, clean_prose
from rag.formats.html_walk import HtmlWalker
from rag.formats.metadata import frontmatter_from_fields
from rag.formats.runbook import Frontmatter, ParsedRunbook

_XML_DECLARATION = re.compile(r"\A\s*<\?xml[^>]*\?>")
_CDATA_OPEN = "<![CDATA["
_CDATA_CLOSE = "]]>"


def parse_html(text: str, *, fallback_title: str) -> ParsedRunbook:
    """An HTML file: ``<title>`` and ``<meta name=…>`` are its metadata, headings its sections."""
    root = _parse_tree(text)
    head = root.find("head")
    fields: dict[str, str] = {}
    if head is not None:
        for meta in head.iterchildren("meta"):
            name, content = meta.get("name"), meta.get("content")
            if name and content is not None:
                fields[name] = content
        title = head.find("title")
        if title is not None and "title" not in fields:
            fields["title"] = " ".join(clean_prose("".join(title.itertext())).split())
    walker = _walk(root)
    return assemble(
        walker.events, frontmatter=frontmatter_from_fields(fields), fallback_title=fallback_title
    )


def parse_confluence_storage(xhtml: str, *, title: str) -> ParsedRunbook:
    """A Confluence page body in storage format, under its page title.

    The title is the first entry of every heading path and the body's headings — level 1
    included, as Confluence authors use it for sections — are the sections below it.
    """
    page_title = " ".join(title.split())
    if not page_title:
        raise RunbookFormatError("a Confluence page needs a title")
    walker = _walk(_parse_tree(xhtml))
    events = walker.events
    # Pages often repeat their title as the first heading: it is the root already.
    first = next(iter(events), None)
    if isinstance(first, Heading) and first.text == page_title:
        events = events[1:]
    return assemble(
        events,
        frontmatter=Frontmatter(title=page_title),
        fallback_title=page_title,
        page_title=page_title,
    )


def _walk(root: etree._Element) -> HtmlWalker:
    walker = HtmlWalker()
    body = root.find("body")
    try:
        walker.walk_children(body if body is not None else root)
    except RecursionError as exc:
        raise RunbookFormatError("markup is nested too deeply to read") from exc
    walker.flush()
    return walker


def _parse_tree(text: str) -> etree._Element:
    source = _unwrap_cdata(_XML_DECLARATION.sub("", text.removeprefix("\ufeff"), count=1))
    if not source.strip():
        return etree.Element("html")
    parser = etree.HTMLParser(
        recover=True,
        no_network=True,
        remove_comments=True,
        remove_pis=True,
        default_doctype=False,
        collect_ids=False,
    )
    try:
        root = etree.fromstring(source, parser)
    except (etree.LxmlError, ValueError) as exc:
        raise RunbookFormatError(f"unreadable HTML: {exc}") from exc
    for entry in parser.error_log:
        if entry.type_name == "ERR_RESOURCE_LIMIT":
            # libxml2 stops at 256 nested elements and would silently drop what lies deeper.
            raise RunbookFormatError("unreadable HTML: elements nested too deeply")
    return root if root is not None else etree.Element("html")


def _unwrap_cdata(text: str) -> str:
    """Each ``<![CDATA[…]]>`` section as escaped text (an unclosed one runs to the end).

    A body holding a literal ``]]>`` is stored as two sections (``]]]]><![CDATA[>``), which
    join back into it here. One pass with ``str.find``: linear in the text.
    """
    parts: list[str] = []
    position = 0
    while (start := text.find(_CDATA_OPEN, position)) != -1:
        parts.append(text[position:start])
        content_start = start + len(_CDATA_OPEN)
        end = text.find(_CDATA_CLOSE, content_start)
        if end == -1:
            end = len(text)
        parts.append(html.escape(text[content_start:end], quote=False))
        position = min(end + len(_CDATA_CLOSE), len(text))
    parts.append(text[position:])
    return "".join(parts)
