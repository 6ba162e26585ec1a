"""AsciiDoc runbooks, read by our own line parser of the block structure Asciidoctor documents.

asciidoc-py, the one AsciiDoc processor on PyPI, is no option: it runs ``{sys:…}`` attributes
and source-highlight filters as shell commands and reads ``include::`` files unless in safe
mode, whose HTML backends then fail to load; it keeps its state in module globals and is GPL.
This reader never reads a file or runs anything: ``include::`` and conditionals are dropped.

Read: the header (``= Title``, attribute entries ``:service: payments`` — front-matter names are
the metadata), section titles ``==`` to ``======``, listing/literal/fenced blocks whole as code
(``[source,bash]``), admonition paragraphs and blocks, example/sidebar/quote/open blocks, lists,
description lists, tables (``|===``), block titles; comments (``//``, ``////`` blocks,
``[comment]`` paragraphs and blocks), passthroughs and images dropped: only what Asciidoctor
shows is indexed.
"""

from __future__ import annotations

import re

from rag.errors import RunbookFormatError
from rag.formats.asciidoc_attributes import DocumentAttributes
from rag.formats.asciidoc_inline import inline_text
from rag.formats.asciidoc_table import table_rows
from rag.formats.blocks import Block, Heading, assemble, table_block
from rag.formats.metadata import frontmatter_from_fields
from rag.formats.runbook import ParsedRunbook
from rag.formats.writer import EventWriter

# Titles end at their last non-blank character (greedy, so a run of blanks is scanned once);
# a section title's closing marks (``== Title ==``) are cut off after the match.
_DOCUMENT_TITLE = re.compile(r"=[ \t]+(\S(?:.*\S)?)[ \t]*")
_SECTION = re.compile(r"(={1,6})[ \t]+(\S(?:.*\S)?)[ \t]*")
_CLOSING_MARKS = re.compile(r"(?<![ \t])[ \t]+=+\Z")
_DELIMITER = re.compile(r"(-{4,}|\.{4,}|={4,}|\*{4,}|_{4,}|\+{4,}|/{4,}|--|[|!,:]={3,})[ \t]*")
_FENCE = re.compile(r"(`{3,})[ \t]*([\w+#.-]*)[^`]*")
_BLOCK_ATTRIBUTES = re.compile(r"\[([^\[\]].*)\]")
_BLOCK_TITLE = re.compile(r"\.([^.\s].*)")
_LIST_ITEM = re.compile(r"[ \t]*(\*{1,6}|-|\.{1,6}|\d{1,9}\.|<\d{1,3}>)[ \t]+(\S.*)")
_DESCRIPTION = re.compile(r"(\S.*?)(?:::{1,3}|;;)(?:[ \t]+(.*))?")
_ADMONITION = re.compile(r"(NOTE|TIP|IMPORTANT|WARNING|CAUTION):[ \t]+(.*)")
_SKIPPED_LINE = re.compile(
    r"(?:include|ifdef|ifndef|ifeval|endif)::.*|(?:image|video|audio|toc)::[^\[]*\[.*\]|'{3,}|<{3}"
)
_ADMONITIONS = {"NOTE": "Note", "TIP": "Tip", "IMPORTANT": "Important", "WARNING": "Warning"}
_ADMONITIONS["CAUTION"] = "Caution"


def parse_asciidoc(text: str, *, fallback_title: str) -> ParsedRunbook:
    lines = text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n").split("\n")
    attributes = DocumentAttributes(source_chars=len(text))
    title, start = _header(lines, attributes)
    reader = _Reader(attributes)
    if title:
        reader.events.append(Heading(1, " ".join(inline_text(title, attributes).split())))
    try:
        reader.read(lines[start:], nested=False)
    except RecursionError as exc:
        raise RunbookFormatError("AsciiDoc blocks are nested too deeply to read") from exc
    reader.flush()
    return assemble(
        reader.events,
        frontmatter=frontmatter_from_fields(attributes.values),
        fallback_title=fallback_title,
    )


def _header(lines: list[str], attributes: DocumentAttributes) -> tuple[str | None, int]:
    """Read the attribute entries and find the document title, up to the first blank line after
    the title: the title and the index of the first body line."""
    index = 0
    while index < len(lines) and (not lines[index].strip() or _is_line_comment(lines[index])):
        index += 1
    while index < len(lines) and attributes.set_from_entry(lines[index]):
        index += 1
    title_line = _DOCUMENT_TITLE.fullmatch(lines[index]) if index < len(lines) else None
    if title_line is None:
        return None, index
    index += 1
    # Author and revision lines, comments and attribute entries, up to the first blank line.
    while index < len(lines) and lines[index].strip():
        attributes.set_from_entry(lines[index])
        index += 1
    return title_line[1], index


class _Reader(EventWriter):
    def __init__(self, attributes: DocumentAttributes) -> None:
        super().__init__()
        self.attributes = attributes
        # Per open list level: its kind ("ordered" / "bullet") and whether an item is open.
        self._levels: list[list[str | bool]] = []
        self._block_attributes: list[str] = []
        self._block_title = ""

    def read(self, lines: list[str], *, nested: bool) -> None:
        index = 0
        attached = False  # the line before was a list continuation ("+")
        while index < len(lines):
            line = lines[index].rstrip()
            index += 1
            if not line:
                self.flush()
                continue
            if _is_line_comment(line):
                continue
            was_attached, attached = attached, False
            starts_paragraph = not self._inline and not was_attached
            delimiter = _DELIMITER.fullmatch(line) or _FENCE.fullmatch(line)
            if delimiter is not None:
                end = _closing(lines, index, line.strip())
                if not was_attached:
                    self._close_lists()
                self._delimited(line.strip(), delimiter, lines[index:end])
                index = end + 1
            elif starts_paragraph and self._style() == "comment":
                # A ``[comment]`` paragraph: Asciidoctor never shows it.
                self._block_attributes, self._block_title = [], ""
                index = _paragraph_end(lines, index)
            elif line == "+" and self._levels:
                self.flush()
                attached = True
            elif (section := _SECTION.fullmatch(line)) is not None:
                self._close_lists()
                self._title_or_paragraph(section, nested=nested)
            elif (block_attributes := _BLOCK_ATTRIBUTES.fullmatch(line)) is not None:
                self.flush()
                if not line.startswith("[["):
                    self._block_attributes = _positional(block_attributes[1])
            elif (block_title := _BLOCK_TITLE.fullmatch(line)) is not None and not self._inline:
                self._block_title = block_title[1]
            elif _SKIPPED_LINE.fullmatch(line) or self.attributes.set_from_entry(line):
                self.flush()
            elif (item := _LIST_ITEM.fullmatch(line)) is not None:
                self._item(item[1], item[2])
            elif (admonition := _ADMONITION.fullmatch(line)) is not None and starts_paragraph:
                self._close_lists()
                self.begin_label(_ADMONITIONS[admonition[1]])
                self.prose(admonition[2])
            elif line[0] in " \t" and starts_paragraph:
                self._close_lists()
                end = _paragraph_end(lines, index)
                self._code([line, *lines[index:end]], language="")
                index = end
            elif (term := _DESCRIPTION.fullmatch(line)) is not None:
                # Each term of a description list starts its own line.
                self._close_lists()
                self.prose(f"{term[1]}: {term[2] or ''}")
            else:
                if starts_paragraph:
                    self._close_lists()
                    self._take_block_title()
                self.prose(line)
        self._close_lists()

    def prose(self, line: str) -> None:
        text = inline_text(line, self.attributes)
        self.inline(text if text.endswith("\n") else text + " ")

    def _title_or_paragraph(self, section: re.Match[str], *, nested: bool) -> None:
        text = " ".join(inline_text(_CLOSING_MARKS.sub("", section[2]), self.attributes).split())
        if nested:
            # Asciidoctor allows no section inside a block: the title is a paragraph.
            self.flush()
            self.inline(text)
            self.flush()
            return
        self.begin_heading(len(section[1]))
        self.inline(text)
        self.flush()
        self._block_attributes, self._block_title = [], ""

    def _item(self, marker: str, text: str) -> None:
        kind = "ordered" if marker[0] in ".0123456789<" else "bullet"
        depth = len(marker) if marker[0] in "*." else 1
        while len(self._levels) > depth or (
            len(self._levels) == depth and self._levels[-1][0] != kind
        ):
            self._close_level()
        while len(self._levels) < depth:
            self.begin_list(ordered=kind == "ordered")
            self._levels.append([kind, False])
        if self._levels[-1][1]:
            self.end_item()
        self.begin_item()
        self._levels[-1][1] = True
        self.prose(text)

    def _close_level(self) -> None:
        _, item_open = self._levels.pop()
        if item_open:
            self.end_item()
        self.end_list()

    def _close_lists(self) -> None:
        self.flush()
        while self._levels:
            self._close_level()

    def _take_block_title(self) -> None:
        title, self._block_title = self._block_title, ""
        if title:
            self.emit(Block(" ".join(inline_text(title, self.attributes).split())))

    def _style(self) -> str:
        return self._block_attributes[0].strip().lower() if self._block_attributes else ""

    def _delimited(self, opener: str, delimiter: re.Match[str], content: list[str]) -> None:
        style = self._style()
        attributes, self._block_attributes = self._block_attributes, []
        kind = opener[0]
        if kind in "/+" or style == "comment":
            # Comment blocks (``////``, ``[comment]``) and passthroughs: nothing a reader sees.
            self._block_title = ""
            return
        self._take_block_title()
        if kind == "`":
            self._code(content, language=delimiter[2])
        elif kind in "-." and opener != "--":
            source = style in ("source", "") and len(attributes) > 1
            self._code(content, language=attributes[1].strip() if source else "")
        elif kind in "|!,:" and opener[1] == "=":
            shown = [line for line in content if not _is_line_comment(line)]
            rows, header = table_rows(shown, attributes, separator=opener[0])
            cells = [[inline_text(cell, self.attributes) for cell in row] for row in rows]
            self.emit(table_block(cells, header=header))
        elif label := _ADMONITIONS.get(style.upper(), ""):
            self.begin_label(label)
            self.read(content, nested=True)
            self.end_label()
        else:
            self.flush()
            self.read(content, nested=True)
            self.flush()

    def _code(self, lines: list[str], *, language: str) -> None:
        self.flush()
        self.code("\n".join(line.rstrip() for line in lines), language)


def _is_line_comment(line: str) -> bool:
    return line.startswith("//") and not line.startswith("////")


def _closing(lines: list[str], start: int, opener: str) -> int:
    """The index of the line closing a block opened by ``opener``; an unclosed block runs to
    the end of the document, as in Asciidoctor."""
    closer = opener if opener[0] != "`" else "`" * (len(opener) - len(opener.lstrip("`")))
    for index in range(start, len(lines)):
        if lines[index].rstrip() == closer:
            return index
    return len(lines)


def _paragraph_end(lines: list[str], start: int) -> int:
    index = start
    while index < len(lines) and lines[index].strip():
        index += 1
    return index


def _positional(attributes: str) -> list[str]:
    """``source,bash,linenums`` or ``NOTE``: the positional attributes, named ones kept as
    ``name=value`` (quotes removed)."""
    parts: list[str] = []
    current: list[str] = []
    quoted = False
    for char in attributes:
        if char == '"':
            quoted = not quoted
        elif char == "," and not quoted:
            parts.append("".join(current).strip())
            current = []
        else:
            current.append(char)
    return [*parts, "".join(current).strip()]
