"""AsciiDoc inline markup as Markdown-ish text: formatting marks dropped, code spans kept, links
and cross references as their visible text, attribute references replaced by their values.

Every pattern is bounded in length, so a line full of unpaired ``*`` or ``[`` stays linear.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from rag.formats.blocks import inline_code

_CODE_SPAN = re.compile(r"(?<![\w`\\])``?(\+?)([^`\n]{1,2000}?)\1``?(?![\w`])")
_ATTRIBUTE = re.compile(r"(?<!\\)\{([\w][\w-]{0,80})\}")
_BUILTIN_ATTRIBUTES = {
    "amp": "&", "apos": "'", "asterisk": "*", "backslash": "\\", "backtick": "`", "blank": "",
    "brvbar": "¦", "caret": "^", "cpp": "C++", "deg": "°", "empty": "", "endsb": "]", "gt": ">",
    "lt": "<", "nbsp": " ", "plus": "+", "quot": '"', "sp": " ", "startsb": "[", "tilde": "~",
    "two-colons": "::", "two-semicolons": ";;", "vbar": "|", "wj": "", "zwsp": "",
}  # fmt: skip
_URL = re.compile(r"(?<![\w/])(?:https?|ftp|irc|mailto|file):[^\s\[\]]{1,2000}")
_URL_MACRO = re.compile(r"((?:link|mailto):)?([^\s\[\]]{1,2000})\[([^\]\n]{0,500})\]")
_XREF_MACRO = re.compile(r"xref:([^\s\[\]]{1,500})\[([^\]\n]{0,500})\]")
_XREF = re.compile(r"<<([^<>,\n]{1,500}?)(?:,\s*([^<>\n]{0,500}?))?>>")
_DROPPED_MACRO = re.compile(r"(?:image|icon|anchor|indexterm2?):[^\s\[\]]{0,500}\[[^\]\n]{0,500}\]")
_KBD = re.compile(r"kbd:\[([^\]\n]{1,200})\]")
_TEXT_MACRO = re.compile(r"(?:btn|pass|footnote|indexterm)(?::[\w-]{0,100})?:?\[([^\]\n]{0,500})\]")
_MENU = re.compile(r"menu:([^\s\[\]]{1,200})\[([^\]\n]{0,200})\]")
_ANCHOR = re.compile(r"\[\[\[?[^\]\n]{1,200}\]\]\]?")
_INDEX_TERMS = re.compile(r"\(\(\(([^()\n]{1,200})\)\)\)|\(\(([^()\n]{1,200})\)\)")
_ROLE = re.compile(r"\[[.#%\w -]{1,100}\](?=#)")
_UNCONSTRAINED = re.compile(r"(\*\*|__|##|\+\+)(?=\S)(.{1,500}?)(?<=\S)\1")
_CONSTRAINED = re.compile(r"(?<![\w*_#^~\\])([*_#^~])(?=\S)([^\n]{0,500}?\S)?\1(?![\w*_#^~])")
_HARD_BREAK = re.compile(r"[ \t]\+$", re.MULTILINE)
_ESCAPE = re.compile(r"\\([*_`#^~+\[\]{}<\\])")


def inline_text(text: str, attributes: Mapping[str, str]) -> str:
    """One paragraph's (or heading's, or cell's) inline markup as text."""
    parts: list[str] = []
    position = 0
    for span in _CODE_SPAN.finditer(text):
        parts.append(_prose(text[position : span.start()], attributes))
        code = span[2] if span[1] else _substitute(span[2], attributes)
        parts.append(inline_code(code))
        position = span.end()
    parts.append(_prose(text[position:], attributes))
    return "".join(parts)


def _substitute(text: str, attributes: Mapping[str, str]) -> str:
    def value(match: re.Match[str]) -> str:
        name = match[1].lower()
        if name in attributes:
            return attributes[name]
        return _BUILTIN_ATTRIBUTES.get(name, match[0])

    return _ATTRIBUTE.sub(value, text)


def _prose(text: str, attributes: Mapping[str, str]) -> str:
    if not text:
        return ""
    text = _substitute(text, attributes)
    text = _HARD_BREAK.sub("\n", text)
    text = _DROPPED_MACRO.sub("", text)
    text = _KBD.sub(lambda m: inline_code(m[1]), text)
    text = _MENU.sub(lambda m: " > ".join([m[1], *(p.strip() for p in m[2].split(">"))]), text)
    text = _XREF_MACRO.sub(lambda m: m[2] or _target_name(m[1]), text)
    text = _XREF.sub(lambda m: m[2] or _target_name(m[1]), text)
    text = _TEXT_MACRO.sub(lambda m: m[1], text)
    text = _URL_MACRO.sub(_link, text)
    text = _ANCHOR.sub("", text)
    text = _INDEX_TERMS.sub(lambda m: m[2] or "", text)
    text = _ROLE.sub("", text)
    text = _UNCONSTRAINED.sub(lambda m: m[2], text)
    text = _CONSTRAINED.sub(lambda m: m[2] or "", text)
    return _ESCAPE.sub(r"\1", text)


def _link(match: re.Match[str]) -> str:
    target, label = match[2], match[3].split(",")[0].strip().strip('"')
    if match[1] or _URL.fullmatch(target):
        return label or target
    # Not a link macro (``word[text]``): left as written.
    return match[0]


def _target_name(target: str) -> str:
    name = target.split("#")[-1] or target
    return name.removesuffix(".adoc").replace("-", " ").replace("_", " ").strip()
