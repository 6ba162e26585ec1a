"""Walk a parsed HTML tree (plain HTML or Confluence storage format) into headings and blocks.

The walk streams: prose gathers in a buffer that each block-level element flushes, so markup
that a lenient parser nested oddly (a heading inside an unclosed ``<strong>``, a list inside a
paragraph) still comes out in document order. Confluence's ``ac:`` elements are delegated to
``rag.formats.confluence``. Comments (dropped by the parser, an unclosed one to the end) and
hidden elements are not read: only what the page shows is runbook text.
"""

from __future__ import annotations

import re

from lxml import etree

from rag.formats import confluence
from rag.formats.blocks import Block, clean_prose, inline_code, table_block
from rag.formats.writer import EventWriter

HEADINGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
BLOCK_TAGS = frozenset(
    {
        "address", "article", "aside", "blockquote", "body", "center", "dd", "details", "dialog",
        "div", "dl", "dt", "fieldset", "figcaption", "figure", "footer", "form", "header", "hr",
        "html", "legend", "li", "main", "ol", "p", "pre", "section", "summary", "table", "ul",
        *HEADINGS,
    }
)  # fmt: skip
# Chrome and embedded media: nothing in them is runbook text.
DROPPED_TAGS = frozenset(
    {
        "audio", "button", "canvas", "colgroup", "col", "embed", "head", "iframe", "img",
        "input", "map", "math", "meta", "nav", "noscript", "object", "option", "script",
        "select", "source", "style", "svg", "template", "textarea", "title", "track", "video",
    }
)  # fmt: skip
_CODE_TAGS = frozenset({"code", "kbd", "samp", "tt"})
_PLAIN_TAGS = frozenset(
    {
        "a",
        "b",
        "del",
        "em",
        "i",
        "ins",
        "mark",
        "p",
        "s",
        "small",
        "span",
        "strong",
        "sub",
        "sup",
        "u",
    }
)
_LANGUAGE_CLASS = re.compile(r"(?:^|\s)(?:language-|lang-|brush:\s*)([\w+#.-]+)")
# Inline styles a browser renders as nothing (Confluence keeps a page's inline styles too).
_HIDDEN_STYLE = re.compile(r"(?:^|;)\s*(?:display\s*:\s*none|visibility\s*:\s*hidden)\b", re.I)


class HtmlWalker(EventWriter):
    """Walks an HTML tree (``ac:`` elements through ``rag.formats.confluence``) into events."""

    def walk_children(self, element: etree._Element) -> None:
        self.text(element.text)
        for child in element:
            if isinstance(child.tag, str):
                self.element(child)
            self.text(child.tail)

    def element(self, element: etree._Element) -> None:
        tag = str(element.tag)
        if is_hidden(element):
            return
        if tag.startswith(("ac:", "ri:")):
            confluence.convert(self, element)
        elif tag in DROPPED_TAGS:
            return
        elif tag in HEADINGS:
            self.begin_heading(HEADINGS[tag])
            self.walk_children(element)
            self.flush()
        elif tag == "br":
            self.inline("\n")
        elif tag == "pre" and not _holds_blocks(element):
            self.code(_text_of(element), _language(element))
        elif tag in _CODE_TAGS and not _holds_blocks(element):
            self.inline(inline_code(_text_of(element)))
        elif tag == "table" and not _holds_headings(element):
            self.table(element)
        elif tag in ("ul", "ol"):
            self.list(element, ordered=tag == "ol")
        elif tag == "li":
            self.item(element)
        elif tag == "time" and not _text_of(element).strip():
            self.inline(element.get("datetime", ""))
        elif tag in BLOCK_TAGS:
            self.flush()
            self.walk_children(element)
            self.flush()
        else:
            self.walk_children(element)

    def labelled(self, label: str, body: etree._Element | None) -> None:
        """A note, warning or panel: its label leads the first paragraph of its body."""
        self.begin_label(label)
        if body is not None:
            self.walk_children(body)
        self.end_label()

    def list(self, element: etree._Element, *, ordered: bool) -> None:
        self.begin_list(ordered=ordered)
        self.walk_children(element)
        self.end_list()

    def text_in_cell(self, element: etree._Element) -> str:
        inner = HtmlWalker(in_cell=True)
        inner.walk_children(element)
        return inner.cell_text()

    def item(self, element: etree._Element) -> None:
        self.begin_item()
        self.walk_children(element)
        self.end_item()

    def table(self, element: etree._Element) -> None:
        self.flush()
        for caption in element.iterchildren("caption"):
            self.emit(Block(clean_prose(_text_of(caption))))
        rows = [
            row
            for part in (element, *element.iterchildren("thead", "tbody", "tfoot"))
            for row in part.iterchildren("tr")
        ]
        cells = [[cell for cell in row.iterchildren("th", "td")] for row in rows]
        header = bool(cells) and bool(cells[0]) and all(cell.tag == "th" for cell in cells[0])
        self.emit(table_block([[_cell_text(cell) for cell in row] for row in cells], header=header))


def is_hidden(element: etree._Element) -> bool:
    """An element the page never shows (``hidden``, ``display: none``): not runbook text."""
    return element.get("hidden") is not None or bool(_HIDDEN_STYLE.search(element.get("style", "")))


def _cell_text(cell: etree._Element) -> str:
    tags = [str(inner.tag) for inner in cell.iterdescendants()]
    if tags.count("p") <= 1 and all(tag in _PLAIN_TAGS for tag in tags):
        # Most cells are one paragraph of plain or emphasised text: no walk needed.
        return clean_prose(_text_of(cell).replace("\n", " "))
    walker = HtmlWalker(in_cell=True)
    walker.walk_children(cell)
    return walker.cell_text()


def _text_of(element: etree._Element) -> str:
    """The text the element shows: comments were dropped, hidden descendants are skipped."""
    parts = [element.text or ""]
    for child in element:
        if isinstance(child.tag, str) and not is_hidden(child):
            parts.append(_text_of(child))
        parts.append(child.tail or "")
    return "".join(parts)


def _language(element: etree._Element) -> str:
    for candidate in (element, *element.iterchildren("code")):
        match = _LANGUAGE_CLASS.search(candidate.get("class", ""))
        if match:
            return match[1]
    return ""


def _holds_blocks(element: etree._Element) -> bool:
    return any(str(child.tag) in BLOCK_TAGS for child in element.iterdescendants())


def _holds_headings(element: etree._Element) -> bool:
    return any(str(child.tag) in HEADINGS for child in element.iterdescendants())
