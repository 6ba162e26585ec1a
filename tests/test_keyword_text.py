"""What the keyword half reads of a question: plurals of codes become the codes themselves."""

from __future__ import annotations

import pytest

from rag.retrieval.terms import keyword_text, without_references


@pytest.mark.parametrize(
    ("question", "read_as"),
    [
        (
            "payments are throwing 502s, what do I check first?",
            "payments are throwing 502, what do I check first?",
        ),
        ("lots of 5xxs and some 403s", "lots of 5xx and some 403"),
        ("retry after 10s", "retry after 10"),
    ],
)
def test_plural_status_codes_are_read_as_the_code(question: str, read_as: str) -> None:
    assert keyword_text(question) == read_as


@pytest.mark.parametrize(
    "question", ["k8s nodes are NotReady", "s3 bucket is full", "ops runbooks"]
)
def test_words_that_merely_end_in_s_are_left_alone(question: str) -> None:
    assert keyword_text(question) == question


@pytest.mark.parametrize(
    ("question", "searched"),
    [
        ("db down (dbdown #4)", "db down (dbdown )"),
        ("INC #48213: payments 502", "INC : payments 502"),
        ("#4", "#4"),  # nothing else to search: kept
        (
            "quote &#39;x&#39; and issue#4 and error 502",
            "quote &#39;x&#39; and issue#4 and error 502",
        ),
    ],
)
def test_reference_numbers_are_not_searched(question: str, searched: str) -> None:
    assert without_references(question) == searched
