"""Phrasal verbs and their one-word nouns: "fail over" and "failover", "roll back" and "rollback";
and operators' abbreviations and their words, "db" and "database" (``rag.retrieval.abbreviations``).

Runbooks head their procedures with the noun ("## Failover", "## Rollback") and people ask with
the verb ("how do I fail over the payments database?"), or the other way round. Postgres'
english parser reads "fail over" as ``fail`` (and the stopword ``over``), "failover" as
``failov``: the two never meet in the keyword half. ``other_spellings`` gives the spelling the
text does not use, for each such pair it does, so the keyword half can look for both.
"""

from __future__ import annotations

import re
from functools import lru_cache

from rag.retrieval.abbreviations import expansions

# (verb, particle): the verb and the particle written apart, or the two as one word. Only
# pairs whose joined form is an ordinary word of operations writing; "check out" is left out
# because "checkout" is as often a service's name as the verb.
PAIRS = (
    ("back", "up"),
    ("clean", "up"),
    ("cut", "over"),
    ("fail", "back"),
    ("fail", "over"),
    ("fall", "back"),
    ("hand", "off"),
    ("hand", "over"),
    ("log", "in"),
    ("log", "out"),
    ("look", "up"),
    ("roll", "back"),
    ("roll", "out"),
    ("set", "up"),
    ("shut", "down"),
    ("sign", "in"),
    ("sign", "up"),
    ("start", "up"),
    ("switch", "over"),
    ("take", "over"),
    ("tear", "down"),
    ("time", "out"),
    ("warm", "up"),
    ("work", "around"),
)

# The verb in any form ("rolled back", "failing over", "shutting down", "logs in"), then the
# particle; or the joined word, alone or plural ("rollbacks", "setups").
_SPLIT = re.compile(
    r"\b("
    + "|".join(sorted({verb for verb, _ in PAIRS}, key=len, reverse=True))
    + r")(?:[a-z]?(?:ed|ing)|e?s)?\s+("
    + "|".join(sorted({particle for _, particle in PAIRS}))
    + r")\b",
    re.IGNORECASE,
)
_JOINED = re.compile(
    r"\b(" + "|".join(verb + particle for verb, particle in PAIRS) + r")s?\b", re.IGNORECASE
)
_PAIRS = frozenset(PAIRS)
_BY_JOINED = {verb + particle: (verb, particle) for verb, particle in PAIRS}


@lru_cache(maxsize=4096)
def spellings(text: str) -> tuple[tuple[str, str], ...]:
    """Each phrasal verb or compound of ``text`` as written, with its other spelling, in order,
    each once: "failing over" gives ("failing over", "failover"), "rollback" ("rollback",
    "roll back"); then each abbreviation or the word it stands for, "db" ("db", "database")."""
    found: dict[str, str] = {}
    for match in _SPLIT.finditer(text):
        pair = (match.group(1).lower(), match.group(2).lower())
        if pair in _PAIRS:
            found.setdefault("".join(pair), match.group(0).lower())
    for match in _JOINED.finditer(text):
        found.setdefault(" ".join(_BY_JOINED[match.group(1).lower()]), match.group(0).lower())
    for written, other in expansions(text):
        found.setdefault(other, written)
    return tuple((written, other) for other, written in found.items())


def other_spellings(text: str) -> tuple[str, ...]:
    """The other spelling of each phrasal verb, compound or abbreviation in ``text``, in order,
    each once: "fail over" gives "failover", "rollback" gives "roll back", "db" "database"."""
    return tuple(other for _, other in spellings(text))
