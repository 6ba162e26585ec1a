"""Parse one runbook's Markdown into its frontmatter, title and heading-scoped sections."""

from __future__ import annotations

import re
import textwrap
import tomllib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import get_origin

import yaml
from markdown_it import MarkdownIt
from markdown_it.token import Token
from pydantic import ValidationError

from rag.errors import EmptyRunbookError, RunbookFormatError
from rag.formats.heading_paths import HeadingPaths, title_and_root
from rag.formats.noise import strip_comment_block, strip_noise
from rag.formats.runbook import Frontmatter, ParsedRunbook, Section

# Inline parsing is most of the cost and only heading text needs it, so blocks are parsed alone.
_BLOCKS = MarkdownIt("commonmark").disable("inline")
_INLINE = MarkdownIt("commonmark")

_BLANK_LINES_AT_START = re.compile(r"\A(?:[ \t]*\n)+")

# How the sections of a stored document were cut, so ingestion can bring documents stored by an
# older parser up to date without re-embedding them (``rag.ingest.relabel``). 2: a runbook
# without a level-1 heading has its title at the root of every section's heading path.
PARSE_REVISION = 2


@dataclass(frozen=True)
class _Heading:
    level: int
    text: str
    first_line: int
    body_line: int
    nested: bool


def parse_runbook(text: str, *, fallback_title: str) -> ParsedRunbook:
    """Split a runbook into sections, one per heading, each holding its verbatim Markdown body.

    Raises ``RunbookFormatError`` for unreadable frontmatter or a runbook without any text.
    """
    frontmatter, body = _split_frontmatter(_normalize_newlines(text))
    if not body.strip():
        raise EmptyRunbookError("empty runbook")
    env: dict[str, object] = {}
    tokens = _BLOCKS.parse(body, env)
    headings = list(_find_headings(tokens, env))
    first_h1 = next((h.text for h in headings if h.level == 1 and h.text), None)
    # Without a level-1 heading (a Hugo page: front-matter title, sections from `##`) the title
    # is the root of every breadcrumb, as an H1 would be.
    title, root = title_and_root(
        metadata_title=frontmatter.title, first_h1=first_h1, fallback_title=fallback_title
    )
    sections = _cut_sections(
        body.split("\n"),
        headings,
        _code_lines(tokens),
        _comment_lines(tokens),
        title=title,
        root=root,
    )
    if not sections:
        raise RunbookFormatError("empty runbook" if not headings else "no text under any heading")
    return ParsedRunbook(
        frontmatter=frontmatter,
        title=title,
        sections=tuple(sections),
        has_headings=bool(headings),
    )


def _normalize_newlines(text: str) -> str:
    return text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")


def _split_frontmatter(text: str) -> tuple[Frontmatter, str]:
    lines = text.split("\n")
    fence = lines[0].rstrip()
    if fence not in ("---", "+++"):
        return Frontmatter(), text
    closers = ("---", "...") if fence == "---" else ("+++",)
    end = next((i for i in range(1, len(lines)) if lines[i].rstrip() in closers), None)
    if end is None:
        raise RunbookFormatError(f"frontmatter opened with {fence!r} on line 1 is never closed")
    # The leading newline makes the parsers' line numbers match the file's.
    raw = "\n" + "\n".join(lines[1:end])
    data = _load_yaml(raw) if fence == "---" else _load_toml(raw)
    return _validate_frontmatter(data), "\n".join(lines[end + 1 :])


def _load_yaml(raw: str) -> object:
    try:
        return yaml.safe_load(raw)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"line {mark.line + 1}: " if mark is not None else ""
        problem = exc.problem or exc.context or "unreadable YAML"
        raise RunbookFormatError(f"invalid frontmatter: {where}{problem}") from exc
    except yaml.YAMLError as exc:
        # The reader's own message goes on with a position in "<unicode string>": noise here.
        raise RunbookFormatError(f"invalid frontmatter: {str(exc).splitlines()[0]}") from exc


def _load_toml(raw: str) -> object:
    try:
        return tomllib.loads(raw)
    except tomllib.TOMLDecodeError as exc:
        raise RunbookFormatError(f"invalid frontmatter: {exc}") from exc


def _validate_frontmatter(data: object) -> Frontmatter:
    if data is None:
        return Frontmatter()
    if not isinstance(data, dict):
        raise RunbookFormatError(f"frontmatter must be a mapping, not {type(data).__name__}")
    # A key with no value (`tags:`) is how templates leave a field unset.
    present = {key: value for key, value in data.items() if value is not None}
    try:
        return Frontmatter.model_validate(present)
    except ValidationError as exc:
        field = str(exc.errors()[0]["loc"][0])
        is_list = get_origin(Frontmatter.model_fields[field].annotation) is tuple
        expected = "a list of strings" if is_list else "a string"
        raise RunbookFormatError(f"frontmatter {field!r} must be {expected}") from exc


def _find_headings(tokens: Sequence[Token], env: dict[str, object]) -> Iterator[_Heading]:
    for index, token in enumerate(tokens):
        if token.type == "heading_open" and token.map is not None:
            yield _Heading(
                level=int(token.tag[1:]),
                text=_heading_text(tokens[index + 1].content, env),
                first_line=token.map[0],
                body_line=token.map[1],
                nested=token.level > 0,
            )


def _heading_text(source: str, env: dict[str, object]) -> str:
    """The heading as read: emphasis, code and link markup dropped, their text kept."""
    parts: list[str] = []
    # ``env`` carries the link reference definitions found in the whole document.
    for child in _INLINE.parseInline(source, env)[0].children or ():
        if child.type in ("text", "code_inline", "image"):
            parts.append(child.content)
        elif child.type in ("softbreak", "hardbreak"):
            parts.append(" ")
    return " ".join(strip_noise("".join(parts)).split())


def _code_lines(tokens: Sequence[Token]) -> frozenset[int]:
    return frozenset(
        line
        for token in tokens
        if token.type in ("fence", "code_block") and token.map is not None
        for line in range(*token.map)
    )


def _comment_lines(tokens: Sequence[Token]) -> frozenset[int]:
    """The lines of HTML blocks that open with a comment: an unclosed ``<!--`` at the start of
    a line runs to the end of its container (the file, a list item, a quote)."""
    return frozenset(
        line
        for token in tokens
        if token.type == "html_block"
        and token.content.lstrip(" ").startswith("<!--")
        and token.map is not None
        for line in range(*token.map)
    )


def _cut_sections(
    lines: list[str],
    headings: list[_Heading],
    code_lines: frozenset[int],
    comment_lines: frozenset[int],
    *,
    title: str,
    root: tuple[str, ...],
) -> list[Section]:
    spans: list[tuple[tuple[str, ...], int, int, bool]] = []
    paths = HeadingPaths(title=title, root=root)
    path: tuple[str, ...] = (title,) if headings else ()
    start, nested = 0, False
    for heading in headings:
        spans.append((path, start, heading.first_line, nested))
        path = paths.enter(heading.level, heading.text)
        start, nested = heading.body_line, heading.nested
    spans.append((path, start, len(lines), nested))
    sections: list[Section] = []
    for heading_path, first, end, dedent in spans:
        text = _clean_lines(lines, range(first, end), code_lines, comment_lines)
        # A heading inside a list item has an indented body; left indented it would read as code.
        if dedent:
            text = textwrap.dedent(text)
        text = _BLANK_LINES_AT_START.sub("", text).rstrip()
        if text:
            sections.append(Section(heading_path=heading_path, text=text))
    return sections


def _clean_lines(
    lines: list[str], span: range, code_lines: frozenset[int], comment_lines: frozenset[int]
) -> str:
    """Strip comments and shortcodes from prose while code blocks stay byte for byte; of a
    comment block only what follows its closing ``-->`` on the last line is left."""
    out: list[str] = []
    prose: list[str] = []
    comment: list[str] = []
    for index in span:
        if index in comment_lines:
            comment.append(lines[index])
            continue
        if comment:
            prose.append(strip_comment_block("\n".join(comment)))
            comment = []
        if index in code_lines:
            if prose:
                out.append(strip_noise("\n".join(prose)))
                prose = []
            out.append(lines[index])
        else:
            prose.append(lines[index])
    if comment:
        prose.append(strip_comment_block("\n".join(comment)))
    if prose:
        out.append(strip_noise("\n".join(prose)))
    return "\n".join(out)
