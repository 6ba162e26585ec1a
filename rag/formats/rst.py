"""reStructuredText runbooks, parsed by docutils with file inclusion and raw output disabled.

Sections at any adornment style become headings by nesting depth (the first top-level title is
the runbook's name, as a Markdown H1 is). Metadata is a field list that opens the document, or
that directly follows its only top-level title: Sphinx's file-wide metadata and docutils'
bibliographic fields — ``:service:``, ``:tags:``, ``:owner:`` … with front-matter names. YAML
front matter is not read: ``---`` is a section adornment in reStructuredText.
"""

from __future__ import annotations

from docutils import nodes

from rag.errors import RunbookFormatError
from rag.formats.blocks import assemble
from rag.formats.metadata import frontmatter_from_fields
from rag.formats.rst_tree import parse_rst_tree
from rag.formats.rst_walk import RstWalker
from rag.formats.runbook import ParsedRunbook

_SKIPPED_BEFORE_METADATA = (nodes.comment, nodes.target, nodes.substitution_definition)


def parse_rst(text: str, *, fallback_title: str) -> ParsedRunbook:
    document = parse_rst_tree(text)
    fields = _metadata_fields(document)
    walker = RstWalker()
    try:
        walker.walk_children(document)
    except RecursionError as exc:
        raise RunbookFormatError("reStructuredText is nested too deeply to read") from exc
    walker.flush()
    return assemble(
        walker.events,
        frontmatter=frontmatter_from_fields(fields),
        fallback_title=fallback_title,
    )


def _metadata_fields(document: nodes.document) -> dict[str, str]:
    """The fields of the metadata field list, which is then removed from the text."""
    first = _first_body_element(document)
    top_sections = [child for child in document.children if isinstance(child, nodes.section)]
    if isinstance(first, nodes.section) and len(top_sections) == 1:
        after_title = _first_body_element(first, start=1)
        first = after_title if isinstance(after_title, nodes.field_list) else first
    if not isinstance(first, nodes.field_list):
        return {}
    fields: dict[str, str] = {}
    for field in first.children:
        if not isinstance(field, nodes.field):
            continue
        name, body = field.children[0], field.children[1]
        fields[name.astext()] = " ".join(body.astext().split())
    first.parent.remove(first)
    return fields


def _first_body_element(parent: nodes.Element, *, start: int = 0) -> nodes.Node | None:
    for child in parent.children[start:]:
        if isinstance(child, _SKIPPED_BEFORE_METADATA):
            continue
        if isinstance(child, nodes.system_message) and child.get("level", 0) < 3:
            continue
        return child
    return None
