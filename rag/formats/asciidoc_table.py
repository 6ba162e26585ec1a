"""AsciiDoc tables (``|===``, ``!===`` nested, ``,===`` CSV, ``:===`` DSV) as rows of cell text."""

from __future__ import annotations

import re

# A cell specifier right before a separator: span, duplication, alignment, style (``2+a|``).
_CELL_SPEC = re.compile(
    r"(?:^|(?<=\s))(?:\d+\*)?(?:\d*(?:\.\d+)?\+)?[<^>]?(?:\.[<^>])?[adehlmsv]?$"
)
_COLUMN_SPEC = re.compile(r"(\d+)\*")


def table_rows(
    lines: list[str], attributes: list[str], *, separator: str
) -> tuple[list[list[str]], bool]:
    """The table's rows and whether the first is a header row."""
    options = " ".join(attributes).lower()
    header = "header" in options
    if separator in ",:":
        rows = [[cell.strip() for cell in line.split(separator)] for line in lines if line.strip()]
        return rows, header
    content = list(lines)
    while content and not content[0].strip():
        content.pop(0)
    if not content:
        return [], False
    # An implicit header: the first line holds whole cells and a blank line follows it.
    if len(content) > 1 and not content[1].strip() and content[0].lstrip().startswith(separator):
        header = header or "noheader" not in options
    cells = _cells("\n".join(content), separator)
    columns = _column_count(attributes) or len(_cells(content[0], separator)) or 1
    rows = [cells[i : i + columns] for i in range(0, len(cells), columns)]
    return rows, header


def _cells(text: str, separator: str) -> list[str]:
    parts = re.split(r"(?<!\\)" + re.escape(separator), text)[1:]
    # Each part but the last ends with the next cell's specifier, if any: markup, not text.
    cells = [_CELL_SPEC.sub("", part) for part in parts[:-1]] + parts[-1:]
    return [" ".join(cell.replace("\\" + separator, separator).split()) for cell in cells]


def _column_count(attributes: list[str]) -> int:
    for attribute in attributes:
        name, _, value = attribute.partition("=")
        if name.strip().lower() == "cols" and value:
            specs = [spec for spec in value.strip().strip('"').split(",") if spec.strip()]
            return sum(
                int(m[1]) if (m := _COLUMN_SPEC.match(spec.strip())) else 1 for spec in specs
            )
    return 0
