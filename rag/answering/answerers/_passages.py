"""Cut a chunk's Markdown into quotable passages (sentences, list items, table rows) and the
units a reader sees them in (a paragraph, a step, a table, a command on its own).

A passage's text is a contiguous run of the chunk's content with its whitespace collapsed, so it
passes ``verify_draft`` as a quote; so is a unit's. A fenced code block that directly follows a
passage rides along with it, because runbooks introduce commands with a sentence ("Check the
pool:").
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from rag.answering.indented_code import code_fence, indented_body, indented_code_spans

PassageKind = Literal["prose", "item", "row", "code"]

_FENCE = re.compile(r"[ \t]*(?P<marker>`{3,}|~{3,})(?P<info>[^`\n]*)")
_HEADING = re.compile(r"[ \t]{0,3}#{1,6}[ \t]+(?P<text>.*?)[ \t#]*")
_ITEM = re.compile(r"[ \t]*(?:[-*+]|\d{1,9}[.)])[ \t]+(?P<text>.*)")
_ROW = re.compile(r"[ \t]*\|.*")
_ROW_RULE = re.compile(r"[ \t]*\|?[ \t:|-]+\|?[ \t]*")
# A full stop, then whitespace, then something that can start a sentence.
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9`\"'*(\[])")
_ABBREVIATIONS = ("e.g.", "i.e.", "etc.", "vs.", "approx.", "No.")
# `[survival guide]: sidekiq-survival-guide.md` defines a link target; it is not prose.
_LINK_DEFINITION = re.compile(r"[ \t]{0,3}\[[^\]\n]+\]:[ \t]*\S+.*")
_COMMENT_START = "<!--"
_COMMENT_END = "-->"


@dataclass(frozen=True)
class CodeBlock:
    fence: str
    info: str
    body: str
    # The opening fence line as written, so fence and body can be quoted together.
    opening: str = ""

    @property
    def quote(self) -> str:
        """The shortest verbatim run that names the block: its body, or with a short body
        (``uptime``) the opening fence too, so the quote has enough words to verify (an
        indented block has no fence line: its body alone)."""
        if len(self.body.split()) >= 4 or not self.opening:
            return self.body
        return f"{self.opening}\n{self.body}"


@dataclass(frozen=True)
class Passage:
    text: str
    kind: PassageKind
    heading: str
    position: int
    code: CodeBlock | None = None


@dataclass(frozen=True)
class Unit:
    """A paragraph, list item (a step), table or lone command, with the passages it holds.

    ``quote`` is the unit's text as one verbatim run (a table with its rule row); ``display``
    is how it reads (a table keeps one row per line); ``code`` is the block it introduces.
    """

    kind: PassageKind
    heading: str
    passages: tuple[Passage, ...]
    quote: str
    display: str
    code: CodeBlock | None = None


@dataclass(frozen=True)
class _Heading:
    text: str


@dataclass(frozen=True)
class _Text:
    """A paragraph, list item or table; ``lines`` grows while its continuation is read."""

    kind: PassageKind
    lines: list[str]


# None stands for a blank line: it separates blocks but does not stop code attaching to text.
_Block = _Heading | _Text | CodeBlock | None


def cut_passages(content: str) -> list[Passage]:
    """Every quotable passage of ``content`` in reading order; headings themselves are skipped.

    A code block no sentence introduces (right after a heading) is a passage of kind "code"
    with empty text. Link definitions and HTML comments are not passages.
    """
    return [passage for unit in cut_units(content) for passage in unit.passages]


# The same chunks come back for question after question (a tenant's few hundred runbook
# sections); cutting one is pure Python over its whole text, so each is cut once.
@lru_cache(maxsize=4096)
def cut_units(content: str) -> tuple[Unit, ...]:
    """The units of ``content`` in reading order, each with its passages (never empty)."""
    units: list[Unit] = []
    blocks = _blocks(_blank_hidden(content.split("\n")))
    heading = ""
    previous: _Block = None
    position = 0
    for index, block in enumerate(blocks):
        if isinstance(block, _Heading):
            heading = block.text
        if isinstance(block, CodeBlock) and not isinstance(previous, _Text):
            lone = Passage("", "code", heading, position, block)
            units.append(Unit("code", heading, (lone,), "", "", block))
            position += 1
        if block is not None:
            previous = block
        if not isinstance(block, _Text):
            continue
        follower = next((b for b in blocks[index + 1 :] if b is not None), None)
        code = follower if isinstance(follower, CodeBlock) else None
        texts = _texts(block)
        last = len(texts) - 1
        passages = tuple(
            Passage(text, block.kind, heading, position + i, code if i == last else None)
            for i, text in enumerate(texts)
        )
        position += len(passages)
        kept = tuple(passage for passage in passages if passage.text or passage.code is not None)
        if kept:
            display = (
                "\n".join(line.strip() for line in block.lines)
                if block.kind == "row"
                else _collapse(block.lines)
            )
            units.append(Unit(block.kind, heading, kept, _collapse(block.lines), display, code))
    return tuple(units)


def _texts(block: _Text) -> list[str]:
    if block.kind == "prose":
        return _sentences(block.lines)
    if block.kind == "row":
        return [_collapse([line]) for line in block.lines if not _ROW_RULE.fullmatch(line)]
    return [_collapse(block.lines)]


def _blank_hidden(lines: list[str]) -> list[str]:
    """Blank out link definitions and HTML comment lines (a reader never sees them rendered)."""
    shown: list[str] = []
    in_comment = False
    for line in lines:
        stripped = line.strip()
        if in_comment:
            in_comment = _COMMENT_END not in stripped
            shown.append("")
        elif stripped.startswith(_COMMENT_START):
            in_comment = _COMMENT_END not in stripped
            shown.append("")
        elif _LINK_DEFINITION.fullmatch(line):
            shown.append("")
        else:
            shown.append(line)
    return shown


def _blocks(lines: list[str]) -> list[_Block]:
    blocks: list[_Block] = []
    indented = dict(indented_code_spans("\n".join(lines)))
    index = 0
    while index < len(lines):
        line = lines[index]
        if (fence := _FENCE.fullmatch(line)) is not None:
            code, index = _read_code(lines, index, fence)
            blocks.append(code)
            continue
        if (end := indented.get(index)) is not None:
            body = indented_body(lines[index:end])
            blocks.append(CodeBlock(code_fence(body), "", body))
            index = end
            continue
        index += 1
        last = blocks[-1] if blocks else None
        if not line.strip():
            blocks.append(None)
        elif (heading := _HEADING.fullmatch(line)) is not None:
            blocks.append(_Heading(heading.group("text")))
        elif (item := _ITEM.fullmatch(line)) is not None:
            blocks.append(_Text("item", [item.group("text")]))
        elif _ROW.fullmatch(line):
            # A table is one block, its rule row included, so it quotes as one verbatim run.
            if isinstance(last, _Text) and last.kind == "row":
                last.lines.append(line)
            elif not _ROW_RULE.fullmatch(line):
                blocks.append(_Text("row", [line]))
        elif isinstance(last, _Text) and last.kind != "row":
            last.lines.append(line)
        else:
            blocks.append(_Text("prose", [line]))
    return blocks


def _read_code(lines: list[str], start: int, fence: re.Match[str]) -> tuple[CodeBlock, int]:
    marker = fence.group("marker")
    closing = re.compile(rf"[ \t]*{re.escape(marker[0])}{{{len(marker)},}}[ \t]*")
    end = start + 1
    while end < len(lines) and not closing.fullmatch(lines[end]):
        end += 1
    body = textwrap.dedent("\n".join(lines[start + 1 : end])).strip("\n")
    opening = lines[start].strip()
    return CodeBlock(marker, fence.group("info").strip(), body, opening), end + 1


def _collapse(lines: list[str]) -> str:
    return " ".join(" ".join(lines).split())


def _sentences(lines: list[str]) -> list[str]:
    text = _collapse(lines)
    sentences: list[str] = []
    start = 0
    for gap in _SENTENCE_END.finditer(text):
        head = text[start : gap.start()]
        # A full stop inside inline code (`kubectl ... -o wide.`) or after "e.g." ends nothing.
        if head.count("`") % 2 or head.endswith(_ABBREVIATIONS):
            continue
        sentences.append(head)
        start = gap.end()
    sentences.append(text[start:])
    return sentences
