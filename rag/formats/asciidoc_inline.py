"""AsciiDoc inline markup as Markdown-ish text: formatting marks dropped, code spans kept, links
and cross references as their visible text, attribute references replaced by their values.

Every pattern is linear in the line it reads, not only bounded: a pattern tried at every
position of a line must not rescan what the try before it scanned, or a 50 KB word costs
50,000 times the bound (2.3 s for the URL macro's 2,000). So a macro's target cannot run past
the next occurrence of the macro's own name, a bracketed label cannot hold a ``[``, a span of
emphasis cannot hold its own mark, and the URL macro's target starts where a word starts.
"""

from __future__ import annotations

import re

from rag.formats.asciidoc_attributes import DocumentAttributes
from rag.formats.blocks import inline_code


def _target(names: str, least: int, most: int) -> str:
    """A macro target (no space or bracket) that stops before the next ``names`` macro."""
    return rf"((?:(?!{names})[^\s\[\]]){{{least},{most}}})"


_CODE_SPAN = re.compile(r"(?<![\w`\\])``?(\+?)([^`\n]{1,2000}?)\1``?(?![\w`])")
_URL = re.compile(r"(?<![\w/])(?:https?|ftp|irc|mailto|file):[^\s\[\]]{1,2000}")
_LABEL = r"\[([^\[\]\n]{0,500})\]"
_URL_MACRO = re.compile(r"(?<![^\s\[\]])((?:link|mailto):)?([^\s\[\]]{1,2000})" + _LABEL)
_XREF_MACRO = re.compile("xref:" + _target("xref:", 1, 500) + _LABEL)
_XREF = re.compile(r"<<([^<>,\n]{1,500}?)(?:,\s*([^<>\n]{0,500}?))?>>")
_DROPPED_NAMES = r"(?:image|icon|anchor|indexterm2?):"
_DROPPED_MACRO = re.compile(_DROPPED_NAMES + _target(_DROPPED_NAMES, 0, 500) + _LABEL)
_KBD = re.compile(r"kbd:\[([^\[\]\n]{1,200})\]")
_TEXT_MACRO = re.compile(r"(?:btn|pass|footnote|indexterm)(?::[\w-]{0,100})?:?" + _LABEL)
_MENU = re.compile("menu:" + _target("menu:", 1, 200) + r"\[([^\[\]\n]{0,200})\]")
_ANCHOR = re.compile(r"\[\[\[?[^\[\]\n]{1,200}\]\]\]?")
_INDEX_TERMS = re.compile(r"\(\(\(([^()\n]{1,200})\)\)\)|\(\(([^()\n]{1,200})\)\)")
_ROLE = re.compile(r"\[[.#%\w -]{1,100}\](?=#)")
# The span's text stops at the next pair of its marks: a mark that no pair closes costs one scan.
_UNCONSTRAINED = re.compile(r"(\*\*|__|##|\+\+)(?=\S)((?:(?!\1).){1,500}?)(?<=\S)\1")
_CONSTRAINED = [
    re.compile(
        rf"(?<![\w*_#^~\\]){mark}(?=\S)([^\n{mark}]{{0,500}}?[^\s{mark}])?{mark}(?![\w*_#^~])"
    )
    for mark in (r"\*", "_", "#", r"\^", "~")
]
_HARD_BREAK = re.compile(r"[ \t]\+$", re.MULTILINE)
_ESCAPE = re.compile(r"\\([*_`#^~+\[\]{}<\\])")


def inline_text(text: str, attributes: DocumentAttributes) -> str:
    """One paragraph's (or heading's, or cell's) inline markup as text."""
    parts: list[str] = []
    position = 0
    for span in _CODE_SPAN.finditer(text):
        parts.append(_prose(text[position : span.start()], attributes))
        code = span[2] if span[1] else attributes.expand(span[2])
        parts.append(inline_code(code))
        position = span.end()
    parts.append(_prose(text[position:], attributes))
    return "".join(parts)


def _prose(text: str, attributes: DocumentAttributes) -> str:
    if not text:
        return ""
    text = attributes.expand(text)
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
    for constrained in _CONSTRAINED:
        text = constrained.sub(lambda m: m[1] or "", text)
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
