"""An AsciiDoc document's attributes and the bounded expansion of ``{name}`` references to them.

As in Asciidoctor, a value's own references are expanded when it is defined
(``:b: {a}{a}``), and a reference to an attribute nobody defined stays as written. Expansion
is where a small file can grow without limit — a line of a thousand ``{a}`` references to a
50 KB value is 50 MB, a chain of doubling definitions is exponential — so every character it
adds is counted, across the whole document, against a budget proportional to the file: past
it the file is refused with a ``RunbookTooLargeError`` (skipped) before the text is built.
"""

from __future__ import annotations

import re

from rag.errors import RunbookTooLargeError

# Expansion may add at most this many times the file's own length (with a floor for small
# files): real runbooks name URLs and hosts in attributes and grow by far less than that.
GROWTH_FACTOR = 3
MIN_GROWTH_CHARS = 64_000

_REFERENCE = re.compile(r"(?<!\\)\{([\w][\w-]{0,80})\}")
_ENTRY = re.compile(r":(!?)([\w][\w-]*)(!?):(?:[ \t]+(.*))?")
_BUILTIN = {
    "amp": "&", "apos": "'", "asterisk": "*", "backslash": "\\", "backtick": "`", "blank": "",
    "brvbar": "¦", "caret": "^", "cpp": "C++", "deg": "°", "empty": "", "endsb": "]", "gt": ">",
    "lt": "<", "nbsp": " ", "plus": "+", "quot": '"', "sp": " ", "startsb": "[", "tilde": "~",
    "two-colons": "::", "two-semicolons": ";;", "vbar": "|", "wj": "", "zwsp": "",
}  # fmt: skip


def growth_limit(source_chars: int) -> int:
    """How many characters attribute expansion may add to a file of ``source_chars``."""
    return max(GROWTH_FACTOR * source_chars, MIN_GROWTH_CHARS)


class DocumentAttributes:
    """The attributes defined so far in one document, and what expanding them may still add."""

    def __init__(self, *, source_chars: int) -> None:
        self.values: dict[str, str] = {}
        self._limit = growth_limit(source_chars)
        self._left = self._limit

    def set_from_entry(self, line: str) -> bool:
        """Apply an attribute entry (``:name: value``, ``:name!:``); False if ``line`` is none."""
        entry = _ENTRY.fullmatch(line.rstrip())
        if entry is None:
            return False
        name = entry[2].lower()
        if entry[1] or entry[3]:
            self.values.pop(name, None)
        else:
            self.values[name] = self.expand((entry[4] or "").strip())
        return True

    def expand(self, text: str) -> str:
        """``text`` with every reference to a known attribute replaced by its value."""
        if "{" not in text:
            return text
        return _REFERENCE.sub(self._value, text)

    def _value(self, reference: re.Match[str]) -> str:
        name = reference[1].lower()
        value = self.values.get(name)
        if value is None:
            value = _BUILTIN.get(name, reference[0])
        self._left -= len(value) - len(reference[0])
        if self._left < 0:
            raise RunbookTooLargeError(
                "AsciiDoc attribute references expand to more than "
                f"{self._limit:,} extra characters (the limit for a file this size): not read"
            )
        return value
