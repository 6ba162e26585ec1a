"""Phrasal verbs meet their one-word nouns in the keyword half: "fail over" is also searched as
"failover", and "rollback" as "roll back"."""

from __future__ import annotations

import pytest

from rag.retrieval.compounds import other_spellings
from rag.retrieval.retrieve import searched_text


@pytest.mark.parametrize(
    ("text", "other"),
    [
        ("how do I fail over the payments database?", ("failover", "db")),
        ("patroni failed over twice last night", ("failover",)),
        ("we are rolling back the release", ("rollback",)),
        ("shutting down the old primary", ("shutdown",)),
        ("users can't log in after the deploy", ("login",)),
        ("how do I set up a replica?", ("setup",)),
        ("the rollback did not finish", ("roll back",)),
        ("Failover and then a LOGIN storm", ("fail over", "log in")),
    ],
)
def test_a_phrasal_verb_or_its_noun_gives_the_other_spelling(
    text: str, other: tuple[str, ...]
) -> None:
    assert other_spellings(text) == other


@pytest.mark.parametrize(
    "text",
    [
        "disk is failing, what is over the limit?",
        "the set of pods is up",
        "check out the checkout-api logs",
        "pods keep failing",
    ],
)
def test_words_that_only_sit_next_to_each_other_give_nothing(text: str) -> None:
    assert other_spellings(text) == ()


def test_the_keyword_half_searches_the_question_and_its_other_spellings() -> None:
    assert searched_text("how do I fail over 2 502s?") == "how do I fail over 2 502? failover"
    assert searched_text("disk full") == "disk full"
