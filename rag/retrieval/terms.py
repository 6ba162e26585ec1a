"""Question and passage terms: tokens, identifiers kept whole, light suffix stemming."""

from __future__ import annotations

import re
from functools import lru_cache

# Names, alerts and metrics (`KubePodCrashLooping`, `ERR`, `pg_stat_activity`) pin the topic.
IDENTIFIER_WEIGHT = 2.0

_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_]*(?:[-./:][A-Za-z0-9_]+)*")
_PARTS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
_SUFFIXES = ("ations", "ation", "ings", "ing", "ions", "ion", "ures", "ure", "ers", "er", "ed")
_STOPWORDS = frozenset(
    """a about after all also am an and any are as at be been before being but by can could
    did do does doing during each for from had has have how i if in into is it its just me
    might more most my no not now of on once only or our out over own same should so some such
    than that the their them then there these they this those through to too under until up
    very was we were what when where which while who whom why will with would you your
    happen happens happening please tell know need want get got""".split()
)


# "502s", "5xxs": Postgres' english parser leaves a token with digits unstemmed, so the plural of
# a status code would be a word the tenant never uses, and the code itself would go unmatched.
_CODE_PLURAL = re.compile(r"\b([0-9]+(?:xx)?)s\b", re.IGNORECASE)


# "#4", "#48213": a ticket, incident, issue or pull-request number. No runbook is about one
# number, yet its digits drew the keyword half to whatever chunks hold them and the embedding
# off the question's topic: "…payments database? (dbdown #4)" abstained where "#5" answered.
_REFERENCE = re.compile(r"(?<![\w&#])#[0-9]+\b")


def without_references(question: str) -> str:
    """``question`` without ``#123``-style reference numbers (unless that leaves nothing)."""
    stripped = _REFERENCE.sub("", question)
    return stripped if stripped.strip() else question


def keyword_text(question: str) -> str:
    """``question`` as the keyword half and the vocabulary check read it: plurals of status
    codes and numbers made singular ("throwing 502s" -> "throwing 502")."""
    return _CODE_PLURAL.sub(r"\1", question)


def question_terms(text: str) -> dict[str, float]:
    """Normalised terms of ``text`` with their weights, in order of first appearance."""
    terms: dict[str, float] = {}
    for token in _TOKEN.findall(text):
        if _is_identifier(token):
            terms.setdefault(token.lower(), IDENTIFIER_WEIGHT)
            for part in _PARTS.findall(token):
                _add_word(terms, part)
        else:
            _add_word(terms, token)
    return terms


# Passages and headings of the chunks retrieved come back for question after question; their
# terms are worked out once (pure Python, a tenth of an answer's event-loop time otherwise).
@lru_cache(maxsize=16384)
def term_set(text: str) -> frozenset[str]:
    """The terms of ``text`` (``question_terms``) without their weights."""
    return frozenset(question_terms(text))


def name_parts(name: str) -> frozenset[str]:
    """The stemmed words of a camel-case or dashed name: ``etcdNoLeader`` -> etcd, leader.

    Empty for a name that is a single word or whose words are all stopwords.
    """
    words: dict[str, float] = {}
    for part in _PARTS.findall(name):
        _add_word(words, part)
    return frozenset(words)


def identifiers(text: str) -> list[str]:
    """The identifier-like tokens of ``text`` (alert names, metrics, error codes), in order."""
    return [token for token in _TOKEN.findall(text) if _is_identifier(token)]


def _is_identifier(token: str) -> bool:
    return (
        any(mark in token for mark in "_-./:")
        or any(char.isdigit() for char in token)
        or (len(token) > 1 and any(char.isupper() for char in token[1:]))
    )


def _add_word(terms: dict[str, float], word: str) -> None:
    word = word.lower()
    if word in _STOPWORDS or (len(word) < 2 and not word.isdigit()):
        return
    terms.setdefault(stem(word), 1.0)


def stem(word: str) -> str:
    """Strip one common suffix, so "restarts", "restarted" and "restarting" meet."""
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            break
    else:
        if word.endswith("s") and not word.endswith("ss") and len(word) > 3:
            word = word[:-1]
    # "cache", "caches" and "cached" all become "cach".
    return word[:-1] if word.endswith("e") and len(word) > 3 else word
