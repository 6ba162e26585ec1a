"""Operators' abbreviations meet the words they stand for: "payments database" is also searched
as "db", and a title's "payments-db" holds the question's "database"."""

from __future__ import annotations

import pytest

from rag.retrieval.abbreviations import expansions
from rag.retrieval.compounds import other_spellings
from rag.retrieval.retrieve import searched_text


@pytest.mark.parametrize(
    ("text", "pairs"),
    [
        ("the payments database is read-only", (("database", "db"),)),
        ("Restore payments-db to a point in time", (("db", "database"),)),
        ("both DBs and their certificates", (("dbs", "database"), ("certificates", "cert"))),
        ("k8s config drift", (("k8s", "kubernetes"), ("config", "configuration"))),
        ("push to the prod repo", (("prod", "production"), ("repo", "repository"))),
        ("what's the max number of members allowed", (("max", "maximum"),)),
        ("What is maximum cluster size?", (("maximum", "max"),)),
    ],
)
def test_an_abbreviation_or_its_word_gives_the_other_spelling(
    text: str, pairs: tuple[tuple[str, str], ...]
) -> None:
    assert expansions(text) == pairs


@pytest.mark.parametrize(
    "text",
    [
        "ask the dbadmin",
        "the product page",
        "configure the reporter",
        "certbot renew",
        "which revision is inside snapshot.db",
        "maxmemory is 14gb",
    ],
)
def test_words_that_only_start_like_an_abbreviation_and_file_extensions_give_nothing(
    text: str,
) -> None:
    assert expansions(text) == ()


def test_abbreviations_are_other_spellings_after_the_phrasal_verbs() -> None:
    assert other_spellings("how do I roll back the payments database?") == ("rollback", "db")


def test_the_keyword_half_searches_a_questions_abbreviations_spelled_out() -> None:
    assert searched_text("is the db up?") == "is the db up? database"
