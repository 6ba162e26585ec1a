"""The event stream a format's tree walk writes to: prose, headings, lists, labels, whole blocks.

Prose gathers until something block-level flushes it, so a reader only says where headings,
lists, items and labelled notes begin and end; the writer turns that into Markdown-ish blocks
(``- `` and ``1. `` items indented under their parents, a note's label leading its first
paragraph).
"""

from __future__ import annotations

from dataclasses import dataclass

from rag.formats.blocks import Block, Event, Heading, clean_prose, fenced_code, inline_code


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


class EventWriter:
    """Collects the events of one document; ``in_cell`` renders code inline, as a cell must."""

    def __init__(self, *, in_cell: bool = False) -> None:
        self.events: list[Event] = []
        self.in_cell = in_cell
        self._inline: list[str] = []
        self._heading_level = 0
        self._lists: list[_ListState] = []
        self._items: list[_Item] = []
        self._label: str | None = None

    def text(self, text: str | None) -> None:
        """Source text, whose line breaks are only wrapping."""
        if text:
            self._inline.append(text.replace("\n", " "))

    def inline(self, text: str) -> None:
        """Text already formatted (a code span, a link's name, a line break)."""
        if text:
            self._inline.append(text)

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

    def begin_heading(self, level: int) -> None:
        """The prose from here to the next flush is the text of a heading of ``level``."""
        self.flush()
        self._heading_level = level

    def begin_label(self, label: str) -> None:
        """A note or warning starts: ``label`` leads its first paragraph."""
        self.flush()
        self._label = label

    def end_label(self) -> None:
        self.flush()
        self._label = None

    def begin_list(self, *, ordered: bool) -> None:
        self.flush()
        parent = self._items[-1] if self._items else None
        indent = parent.indent + " " * len(parent.marker) if parent is not None else ""
        self._lists.append(_ListState(ordered=ordered, indent=indent))

    def end_list(self) -> None:
        self.flush()
        if self._lists:
            self._lists.pop()

    def begin_item(self) -> None:
        self.flush()
        if not self._lists:
            # An item outside any list (malformed markup) is a bullet of its own.
            self._lists.append(_ListState(ordered=False, indent=""))
        state = self._lists[-1]
        state.count += 1
        marker = f"{state.count}. " if state.ordered else "- "
        self._items.append(_Item(marker=marker, indent=state.indent))

    def end_item(self) -> None:
        self.flush()
        if self._items:
            self._items.pop()

    def cell_text(self) -> str:
        """Everything written so far on one line: the text of a table cell."""
        self.flush()
        return " ".join(event.text for event in self.events if isinstance(event, Block))
