"""Whether a passage or a command can be quoted in an answer, and how a command is shown.

A quote is a whole sentence or step of a readable length, never one that could read as a citation
marker, and a command block is quoted whole or not at all (never half a command).
"""

from __future__ import annotations

from rag.answering.answerers._passages import CodeBlock, Passage
from rag.answering.verify import MIN_QUOTE_WORDS, find_markers, normalize_quote

# A longer code block is left out whole: a responder must never copy half a command.
MAX_CODE_LINES = 15
# Longer passages read as a wall of text in Slack; a runbook rarely needs one to answer.
MAX_PASSAGE_CHARS = 600


def table_row(text: str) -> bool:
    # A row alone has lost its header ("| HPA ceiling | `kubectl … patch hpa …` |"): a
    # fragment in a one-line pointer, which could send a responder to undo the wrong thing.
    return text.lstrip().startswith("|")


def quotable_text(passage: Passage) -> bool:
    return bool(passage.text) and quotable(passage.text)


def quotable(text: str, max_chars: int = MAX_PASSAGE_CHARS) -> bool:
    # A bracketed number in quoted prose would read as a citation marker in the answer text.
    return (
        len(text.split()) >= MIN_QUOTE_WORDS
        and len(text) <= max_chars
        and next(find_markers(text), None) is None
    )


def quotable_code(code: CodeBlock) -> bool:
    return (
        bool(code.body.strip())
        and code_lines(code) <= MAX_CODE_LINES
        and len(normalize_quote(code.quote).split()) >= MIN_QUOTE_WORDS
    )


def fenced(code: CodeBlock) -> str:
    return f"{code.fence}{code.info}\n{code.body}\n{code.fence}"


def code_lines(code: CodeBlock) -> int:
    return code.body.count("\n") + 1
