"""Operators' abbreviations and the words they stand for: "db" and "database", "k8s" and
"kubernetes", "cert" and "certificate".

People ask with one and runbooks title with the other ("the payments database" against a page
named "Restore payments-db ..."). Postgres' english parser reads "db" as ``db`` and "database"
as ``databas``: the two never meet in the keyword half, nor in the ranker's title and heading
terms. ``expansions`` gives the spelling the text does not use, for each abbreviation or word it
does, so they can look for both (``rag.retrieval.compounds.spellings`` adds these to its pairs).
"""

from __future__ import annotations

import re

# (abbreviation, word): only abbreviations that stand for one word in operations writing and
# are not ordinary words themselves ("app" is left out: it is as often the product as an
# "application"; "auth" because it is both "authentication" and "authorization").
PAIRS = (
    ("cert", "certificate"),
    ("config", "configuration"),
    ("db", "database"),
    ("k8s", "kubernetes"),
    ("max", "maximum"),
    ("prod", "production"),
    ("repo", "repository"),
)

_BY_SPELLING = {
    **{short: word for short, word in PAIRS},
    **{word: short for short, word in PAIRS},
}
# Either spelling, alone or plural ("dbs", "certificates"), as a whole word: "payments-db" holds
# "db", "dbadmin" does not; nor does a file's extension ("snapshot.db" is etcd's snapshot file).
_SPELLING = re.compile(
    r"(?<!\.)\b(" + "|".join(sorted(_BY_SPELLING, key=len, reverse=True)) + r")s?\b",
    re.IGNORECASE,
)


def expansions(text: str) -> tuple[tuple[str, str], ...]:
    """Each abbreviation or word of ``text`` as written, with its other spelling, in order, each
    once: "the payments database" gives ("database", "db"), "payments-db" ("db", "database")."""
    found: dict[str, str] = {}
    for match in _SPELLING.finditer(text):
        other = _BY_SPELLING[match.group(1).lower()]
        found.setdefault(other, match.group(0).lower())
    return tuple((written, other) for other, written in found.items())
