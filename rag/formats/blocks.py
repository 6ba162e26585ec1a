"""What every non-Markdown reader emits — headings and Markdown-ish text blocks — and how the
blocks become a ``ParsedRunbook``'s sections under the shared heading-path rule.

Section text is Markdown-ish on purpose: chunking keeps fenced code whole and reads ``- `` and
``1. `` lines as list items, and the answer cards render the same text a Markdown runbook has.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from rag.errors import EmptyRunbookError, RunbookFormatError
from rag.formats.heading_paths import HeadingPaths, title_and_root
from rag.formats.runbook import Frontmatter, ParsedRunbook, Section


@dataclass(frozen=True)
class Heading:
    level: int
    text: str


@dataclass(frozen=True)
class Block:
    """A paragraph, list item, table or fenced code block; ``item`` blocks sit on adjacent lines."""

    text: str
    item: bool = False


Event = Heading | Block

# Invisible or look-alike characters that break keyword search and quoting in prose.
_PROSE_TRANSLATION = str.maketrans(
    {
        "\u00a0": " ",  # no-break space
        "\u202f": " ",  # narrow no-break space
        "\u2011": "-",  # non-breaking hyphen
        "\u00ad": None,  # soft hyphen
        "\u200b": None,  # zero-width space
        "\u200c": None,
        "\u200d": None,
        "\u2060": None,  # word joiner
        "\ufeff": None,
    }
)
_SPACES = re.compile(r"[ \t\r\f\v]+")
# A prose line that chunking (or a Markdown renderer) would read as a code fence or a heading.
_MARKDOWN_LINE_START = re.compile(r"^([ \t]*)(`{3,}|~{3,}|#{1,6}(?=[ \t]|$))", re.MULTILINE)
_LANGUAGE = re.compile(r"[^A-Za-z0-9_+#.-]")


def clean_prose(text: str) -> str:
    """Collapse whitespace and drop invisible characters; line breaks in ``text`` are kept."""
    text = text.translate(_PROSE_TRANSLATION)
    if "\n" in text:
        lines = (_SPACES.sub(" ", line).strip() for line in text.split("\n"))
        text = "\n".join(line for line in lines if line)
    else:
        text = _SPACES.sub(" ", text).strip()
    if "`" in text or "~" in text or "#" in text:
        text = _MARKDOWN_LINE_START.sub(lambda m: m[1] + "\\" + m[2], text)
    return text


def inline_code(text: str) -> str:
    """``text`` as a Markdown code span, with a longer backtick run when it holds backticks."""
    text = " ".join(text.translate(_PROSE_TRANSLATION).split())
    if not text:
        return ""
    ticks = "`" * (_longest_run(text, "`") + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def fenced_code(code: str, language: str = "") -> Block:
    """A fenced block holding ``code`` verbatim, fenced longer than any backtick run inside."""
    code = code.replace("\r\n", "\n").replace("\r", "\n").strip("\n")
    fence = "`" * max(3, _longest_run(code, "`") + 1)
    info = _LANGUAGE.sub("", language)[:40]
    return Block(f"{fence}{info}\n{code}\n{fence}")


def _longest_run(text: str, char: str) -> int:
    runs = re.findall(re.escape(char) + "+", text)
    return max((len(run) for run in runs), default=0)


def table_block(rows: Sequence[Sequence[str]], *, header: bool) -> Block | None:
    """Rows as pipe-table lines; a separator line under the first row when it is a header row."""
    cleaned = [[_cell(cell) for cell in row] for row in rows]
    cleaned = [row for row in cleaned if any(row)]
    if not cleaned:
        return None
    width = max(len(row) for row in cleaned)
    lines = ["| " + " | ".join(row + [""] * (width - len(row))) + " |" for row in cleaned]
    if header and len(lines) > 1:
        lines.insert(1, "|" + " --- |" * width)
    return Block("\n".join(lines))


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def assemble(
    events: Iterable[Event],
    *,
    frontmatter: Frontmatter,
    fallback_title: str,
    page_title: str | None = None,
) -> ParsedRunbook:
    """Cut events into sections, one per heading, under the heading-path rule of Markdown.

    With ``page_title`` (a Confluence page) the title is the root of every path and the body's
    headings, level 1 included, are its sections. Raises ``EmptyRunbookError`` when there is no
    text at all, ``RunbookFormatError`` when there are headings but no text under any.
    """
    events = [event for event in events if not isinstance(event, Heading) or event.text]
    headings = [event for event in events if isinstance(event, Heading)]
    root: tuple[str, ...]
    if page_title is not None:
        title, root = page_title, (page_title,)
    else:
        first_h1 = next((h.text for h in headings if h.level == 1), None)
        title, root = title_and_root(
            metadata_title=frontmatter.title, first_h1=first_h1, fallback_title=fallback_title
        )
    paths = HeadingPaths(title=title, root=root)
    path: tuple[str, ...] = (title,) if headings else ()
    sections: list[Section] = []
    body: list[Block] = []
    for event in [*events, Heading(0, "")]:
        if isinstance(event, Block):
            body.append(event)
            continue
        text = _join(body)
        if text:
            sections.append(Section(heading_path=path, text=text))
        body = []
        if event.level:
            path = paths.enter(event.level, event.text)
    if not sections:
        if headings:
            raise RunbookFormatError("no text under any heading")
        raise EmptyRunbookError("no text to index")
    return ParsedRunbook(
        frontmatter=frontmatter, title=title, sections=tuple(sections), has_headings=bool(headings)
    )


def _join(blocks: Sequence[Block]) -> str:
    parts: list[str] = []
    previous: Block | None = None
    for block in blocks:
        text = block.text.strip("\n")
        if not text.strip():
            continue
        if previous is not None:
            parts.append("\n" if block.item and previous.item else "\n\n")
        parts.append(text)
        previous = block
    return "".join(parts).rstrip()
