"""The words a section's own heading opens with, after its numbering: what that part does.

Runbooks written as free prose head each part by its action ("Step 2: delete the keys", "Ban a
single IP", "1. Delete Data", "Option 1: Resolve the underlying issue"); siblings share their
runbook's subject words, and the first word of the heading is what tells them apart. Headings
arrive as the formats' parsers leave them (Markdown, Confluence, reStructuredText, AsciiDoc):
markup is mostly gone, but a numbering label, backticks, a link or a question shape
("How do I find the right logs?") may remain.
"""

from __future__ import annotations

import re
from functools import lru_cache

# A numbering label: "Step 2:", "OPTIONAL Step 3:", "Part 1 -", "Approach 1", "Option A:",
# "Phase one", "1.", "1.2.3", "(2)", "#4", "a)". A bare number with no punctuation after it
# is no label ("404 errors occur when …"); a multi-level one is ("1.2 Configure the pool").
_LABEL = re.compile(
    r"^(?:optional\s+)?"
    r"(?:(?:step|part|phase|stage|option|approach|method|solution|scenario|case|alternative|"
    r"task|way)\s+(?:\d+(?:\.\d+)*|[a-z]|one|two|three|four|five|six|seven|eight|nine|ten)\b"
    r"|\d+(?:\.\d+)+\.?|\(?\d+\s*[.):]|#\d+|[a-z]\))"
    r"\s*[:.)\-\u2013\u2014]?\s*",
    re.IGNORECASE,
)
# Markup a parser may leave around the words: emphasis, code spans, a leading bullet or emoji.
_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
_LEAD = re.compile(r"^[^\w(#]+")
_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)?")
# Postgres' english stop list (tsearch_data/english.stop): words that have no lexeme, so they
# never match a question's lexeme and say nothing about what the part does.
STOPWORDS = frozenset(
    """i me my myself we our ours ourselves you your yours yourself yourselves he him his himself
    she her hers herself it its itself they them their theirs themselves what which who whom this
    that these those am is are was were be been being have has had having do does did doing a an
    the and but if or because as until while of at by for with about against between into through
    during before after above below to from up down in out on off over under again further then
    once here there when where why how all any both each few more most other some such no nor not
    only own same so than too very s t can will just don should now""".split()
)


@lru_cache(maxsize=65536)
def opening_words(heading: str) -> tuple[str, ...]:
    """The heading's words after its numbering label, lower-cased, stopwords left out, in
    order: "Step 2: delete the keys" gives ("delete", "keys"); "How do I find the right logs?"
    ("find", "right", "logs"); a bare label ("Approach 1", "Step 0.1") nothing."""
    text = _LEAD.sub("", _LINK.sub(r"\1", heading).replace("`", "").replace("*", "")).strip()
    text = _LABEL.sub("", text, count=1)
    return tuple(w for w in _WORD.findall(text.lower()) if w not in STOPWORDS)
