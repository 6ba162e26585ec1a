"""Walk a parsed HTML tree (plain HTML or Confluence storage format) into headings and blocks.

The walk streams: prose gathers in a buffer that each block-level element flushes, so markup
that a lenient parser nested oddly (a heading inside an unclosed ``<strong>``, a list inside a
paragraph) still comes out in document order. Confluence's ``ac:`` elements are delegated to
``rag.formats.confluence``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from lxml import etree

from rag.formats import confluence
from rag.formats.blocks import (
    Block,
    Event,
    Heading,
    clean_prose,
    fenced_code,
    inline_code,
    table_block,
)

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


@dataclass
class _ListState:
    ordered: bool
    indent: str
    count: int = 0


@dataclass
class _Item:
    marker: str
    indent: str
    started: bool = False


class HtmlWalker:
    """Collects the events of one tree; ``in_cell`` renders code inline, as a table cell must."""

    def __init__(self, *, in_cell: bool = False) -> None:
        self.events: list[Event] = []
        self.in_cell = in_cell
        self._inline: list[str] = []
        self._heading_level = 0
        self._lists: list[_ListState] = []
        self._items: list[_Item] = []
        self._label: str | None = None

    # --- the walk -------------------------------------------------------------------------

    def walk_children(self, element: etree._Element) -> None:
        self.text(element.text)
        for child in element:
            if isinstance(child.tag, str):
                self.element(child)
            self.text(child.tail)

    def element(self, element: etree._Element) -> None:
        tag = str(element.tag)
        if tag.startswith(("ac:", "ri:")):
            confluence.convert(self, element)
        elif tag in DROPPED_TAGS:
            return
        elif tag in HEADINGS:
            self.flush()
            self._heading_level = HEADINGS[tag]
            self.walk_children(element)
            self.flush()
        elif tag == "br":
            self._inline.append("\n")
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

    def text(self, text: str | None) -> None:
        if text:
            self._inline.append(text.replace("\n", " "))

    def inline(self, text: str) -> None:
        if text:
            self._inline.append(text)

    # --- blocks ---------------------------------------------------------------------------

    def flush(self) -> None:
        """End the prose gathered so far: a heading's text, a list item's or a paragraph."""
        if not self._inline and not self._heading_level:
            return
        raw = "".join(self._inline)
        self._inline = []
        level, self._heading_level = self._heading_level, 0
        if level:
            self.events.append(Heading(level, " ".join(clean_prose(raw).split())))
            return
        text = clean_prose(raw)
        if not text:
            return
        if self._items:
            item = self._items[-1]
            first = item.indent + (item.marker if not item.started else " " * len(item.marker))
            rest = item.indent + " " * len(item.marker)
            item.started = True
            lines = text.split("\n")
            self.events.append(
                Block("\n".join([first + lines[0], *(rest + x for x in lines[1:])]), item=True)
            )
            return
        if self._label is not None:
            text, self._label = f"{self._label}: {text}", None
        self.events.append(Block(text))

    def emit(self, block: Block | None) -> None:
        """Add a whole block (code, table) after the prose before it."""
        self.flush()
        if block is None:
            return
        if self._label is not None:
            self.events.append(Block(f"{self._label}:"))
            self._label = None
        self.events.append(block)

    def code(self, code: str, language: str = "") -> None:
        if self.in_cell:
            self.inline(inline_code(code))
        elif code.strip():
            self.emit(fenced_code(code, language))

    def labelled(self, label: str, body: etree._Element | None) -> None:
        """A note, warning or panel: its label leads the first paragraph of its body."""
        self.flush()
        self._label = label
        if body is not None:
            self.walk_children(body)
        self.flush()
        self._label = None

    def list(self, element: etree._Element, *, ordered: bool) -> None:
        self.flush()
        parent = self._items[-1] if self._items else None
        indent = parent.indent + " " * len(parent.marker) if parent is not None else ""
        self._lists.append(_ListState(ordered=ordered, indent=indent))
        self.walk_children(element)
        self.flush()
        self._lists.pop()

    def item(self, element: etree._Element) -> None:
        self.flush()
        state = self._lists[-1] if self._lists else _ListState(ordered=False, indent="")
        state.count += 1
        marker = f"{state.count}. " if state.ordered else "- "
        self._items.append(_Item(marker=marker, indent=state.indent))
        self.walk_children(element)
        self.flush()
        self._items.pop()

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


def _cell_text(cell: etree._Element) -> str:
    tags = [str(inner.tag) for inner in cell.iterdescendants()]
    if tags.count("p") <= 1 and all(tag in _PLAIN_TAGS for tag in tags):
        # Most cells are one paragraph of plain or emphasised text: no walk needed.
        return clean_prose("".join(cell.itertext()).replace("\n", " "))
    walker = HtmlWalker(in_cell=True)
    walker.walk_children(cell)
    walker.flush()
    return " ".join(event.text for event in walker.events if isinstance(event, Block))


def _text_of(element: etree._Element) -> str:
    return "".join(element.itertext())


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
