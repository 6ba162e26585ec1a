"""Walk a docutils document tree into headings and Markdown-ish blocks.

Sphinx-only markup that plain docutils does not know still reads well: a role it cannot resolve
(``:ref:`Failover <db-failover>```) is its visible text, and a directive it refuses
(``code-block`` with a ``:caption:``, ``seealso``, ``versionadded``) is recovered from the source
docutils keeps in the error message — code as a fenced block, anything else as its text.
"""

from __future__ import annotations

import re
import textwrap

from docutils import nodes

from rag.formats.blocks import clean_prose, inline_code, table_block
from rag.formats.rst_tree import parse_rst_tree
from rag.formats.writer import EventWriter

_ADMONITIONS = {
    "attention": "Attention", "caution": "Caution", "danger": "Danger", "error": "Error",
    "hint": "Hint", "important": "Important", "note": "Note", "tip": "Tip", "warning": "Warning",
}  # fmt: skip
_DROPPED = (
    nodes.comment, nodes.target, nodes.substitution_definition, nodes.image, nodes.raw,
    nodes.transition, nodes.pending, nodes.decoration, nodes.meta,
)  # fmt: skip
_CODE_ROLES = frozenset(
    {
        "code", "command", "envvar", "file", "kbd", "literal", "mailheader", "makevar",
        "option", "program", "regexp", "samp",
    }
)  # fmt: skip
_CODE_DIRECTIVES = frozenset({"code", "code-block", "sourcecode"})
# Directives whose content is a file, a table of contents or output markup: no runbook text.
_DROPPED_DIRECTIVES = frozenset(
    {"highlight", "image", "include", "literalinclude", "raw", "toctree", "contents", "figure"}
)
_ROLE = re.compile(r":(?P<role>[\w.:+-]+):`(?P<text>.*)`", re.DOTALL)
_REFERENCE = re.compile(r"`?(?P<text>[^`]+?)(?:\s*<[^<>]*>)?`?__?", re.DOTALL)
_EXPLICIT_TITLE = re.compile(r"(?P<title>.*?)\s*<[^<>]*>", re.DOTALL)
_DIRECTIVE = re.compile(r"\.\.\s+(?P<name>[\w:.+-]+)::[ \t]*(?P<argument>.*)")
_OPTION = re.compile(r":(?P<name>[\w-]+):[ \t]*(?P<value>.*)")
# Directive content is parsed again as reStructuredText; past this depth it is plain text.
_MAX_NESTED_PARSES = 4


class RstWalker(EventWriter):
    def __init__(self, *, in_cell: bool = False, depth: int = 0, nested: int = 0) -> None:
        super().__init__(in_cell=in_cell)
        self._depth = depth
        self._nested = nested

    def walk_children(self, node: nodes.Element) -> None:
        for child in node.children:
            self.node(child)

    def node(self, node: nodes.Node) -> None:
        if isinstance(node, nodes.Text):
            self.text(node.astext())
        elif isinstance(node, _DROPPED) or not isinstance(node, nodes.Element):
            return
        elif isinstance(node, nodes.section):
            self._section(node)
        elif isinstance(node, nodes.literal_block | nodes.doctest_block):
            self._literal_block(node)
        elif isinstance(node, nodes.literal):
            self.inline(inline_code(node.astext()))
        elif isinstance(node, nodes.problematic):
            self._role(node.astext())
        elif isinstance(node, nodes.system_message):
            self._system_message(node)
        elif isinstance(node, nodes.bullet_list | nodes.enumerated_list):
            self.begin_list(ordered=isinstance(node, nodes.enumerated_list))
            self.walk_children(node)
            self.end_list()
        elif isinstance(node, nodes.list_item):
            self.begin_item()
            self.walk_children(node)
            self.end_item()
        elif isinstance(node, nodes.table):
            self._table(node)
        elif isinstance(node, nodes.Admonition):
            self._admonition(node)
        elif isinstance(node, nodes.topic) and "contents" in node.get("classes", ()):
            return
        elif isinstance(node, nodes.generated) and "sectnum" in node.get("classes", ()):
            return
        elif isinstance(node, nodes.field):
            self._field(node)
        elif isinstance(node, nodes.footnote | nodes.citation):
            self._note(node)
        elif isinstance(node, nodes.line):
            self.walk_children(node)
            self.inline("\n")
        elif isinstance(node, nodes.footnote_reference | nodes.citation_reference):
            self.inline(f"[{node.astext()}]")
        elif isinstance(node, nodes.Inline):
            self.walk_children(node)
        elif isinstance(node, nodes.TextElement | nodes.Structural) or _is_block(node):
            self.flush()
            self.walk_children(node)
            self.flush()
        else:
            self.walk_children(node)

    def _section(self, section: nodes.section) -> None:
        level = self._depth + 1
        outer, self._depth = self._depth, level
        for child in section.children:
            if not isinstance(child, nodes.title):
                self.node(child)
            elif self._nested:
                # A section inside a directive's content: its title reads as a paragraph.
                self.flush()
                self.walk_children(child)
                self.flush()
            else:
                self.begin_heading(level)
                self.walk_children(child)
                self.flush()
        self._depth = outer

    def _literal_block(self, node: nodes.Element) -> None:
        given: list[str] = list(node.get("classes", ()))
        classes = [name for name in given if name not in ("code", "literal-block")]
        language = "pycon" if isinstance(node, nodes.doctest_block) else next(iter(classes), "")
        self.code(node.astext(), language)

    def _role(self, source: str) -> None:
        match = _ROLE.fullmatch(source.strip())
        if match is None:
            # A reference to a target the file does not define: `its text`_ or word_.
            reference = _REFERENCE.fullmatch(source.strip())
            self.text(reference["text"] if reference is not None else source)
            return
        text = match["text"]
        explicit = _EXPLICIT_TITLE.fullmatch(text)
        if explicit is not None and explicit["title"]:
            text = explicit["title"]
        role = match["role"].rsplit(":", 1)[-1]
        self.inline(inline_code(text) if role in _CODE_ROLES else text.replace("\n", " "))

    def _system_message(self, message: nodes.system_message) -> None:
        """Recover a directive docutils refused from the source kept in its error message."""
        source = next(iter(message.findall(nodes.literal_block)), None)
        if source is None:
            return
        lines = source.astext().split("\n")
        directive = _DIRECTIVE.fullmatch(lines[0].strip())
        if directive is None:
            return
        name = directive["name"].lower()
        if name in _DROPPED_DIRECTIVES:
            return
        body = textwrap.dedent("\n".join(lines[1:])).split("\n")
        options: dict[str, str] = {}
        while body and (option := _OPTION.fullmatch(body[0].strip())) is not None:
            options[option["name"]] = option["value"]
            body = body[1:]
        content = "\n".join(body).strip("\n")
        if name in _CODE_DIRECTIVES:
            caption = clean_prose(options.get("caption", ""))
            if caption and not self.in_cell:
                self.flush()
                self.inline(caption)
                self.flush()
            self.code(textwrap.dedent(content), directive["argument"].strip())
        elif content:
            self._nested_content(content)

    def _nested_content(self, content: str) -> None:
        self.flush()
        if self._nested >= _MAX_NESTED_PARSES:
            self.text(content)
            self.flush()
            return
        inner = RstWalker(in_cell=self.in_cell, depth=self._depth, nested=self._nested + 1)
        inner.walk_children(parse_rst_tree(content))
        inner.flush()
        self.events.extend(inner.events)

    def _table(self, table: nodes.table) -> None:
        self.flush()
        for title in table.children:
            if isinstance(title, nodes.title):
                self.text(title.astext())
                self.flush()
        # A nested table's rows are its own: only this table's groups count.
        groups = [group for group in table.children if isinstance(group, nodes.tgroup)]
        parts = [part for group in groups for part in group.children]
        header_rows = [
            row for part in parts if isinstance(part, nodes.thead) for row in part.children
        ]
        body_rows = [
            row for part in parts if isinstance(part, nodes.tbody) for row in part.children
        ]
        rows = [
            [self._cell(entry) for entry in row.children if isinstance(entry, nodes.entry)]
            for row in [*header_rows, *body_rows]
            if isinstance(row, nodes.row)
        ]
        self.emit(table_block(rows, header=bool(header_rows)))

    def _cell(self, entry: nodes.Element) -> str:
        walker = RstWalker(in_cell=True, depth=self._depth, nested=self._nested)
        walker.walk_children(entry)
        return walker.cell_text()

    def _admonition(self, node: nodes.Element) -> None:
        label = _ADMONITIONS.get(node.tagname, "")
        children = list(node.children)
        if children and isinstance(children[0], nodes.title):
            label = clean_prose(children.pop(0).astext())
        self.begin_label(label)
        for child in children:
            self.node(child)
        self.end_label()

    def _field(self, field: nodes.Element) -> None:
        self.flush()
        name, body = field.children[0], field.children[1]
        self.text(f"{name.astext()}: ")
        self.node(body)
        self.flush()

    def _note(self, note: nodes.Element) -> None:
        self.flush()
        for child in note.children:
            if isinstance(child, nodes.label):
                self.inline(f"[{child.astext()}] ")
            else:
                self.node(child)
        self.flush()


def _is_block(node: nodes.Element) -> bool:
    return isinstance(node, nodes.Body | nodes.Part | nodes.Sequential)
