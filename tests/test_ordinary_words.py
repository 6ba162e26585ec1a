"""Ordinary words are the ones the embedding model's tokenizer keeps whole: everyday English
(and its apostrophe-less contractions) is, product names, jargon and identifiers are not."""

from __future__ import annotations

import pytest

from rag import FastEmbedder
from rag.embedding.ordinary_words import NO_ORDINARY_WORDS


@pytest.mark.parametrize(
    "word", ["went", "bunch", "hammering", "keyboard", "Went", "cant", "whats"]
)
def test_everyday_words_and_contractions_typed_without_apostrophe_are_ordinary(
    embedder: FastEmbedder, word: str
) -> None:
    assert word in embedder.ordinary_words


@pytest.mark.parametrize("word", ["patroni", "rabbitmq", "osd", "ceph", "redis", "kafka"])
def test_product_names_and_jargon_the_tokenizer_splits_are_not_ordinary(
    embedder: FastEmbedder, word: str
) -> None:
    assert word not in embedder.ordinary_words


@pytest.mark.parametrize("token", ["virt-handler", "3am", "502", "pg_stat_activity", ""])
def test_tokens_with_digits_or_punctuation_are_never_ordinary(
    embedder: FastEmbedder, token: str
) -> None:
    assert token not in embedder.ordinary_words


def test_without_a_tokenizer_no_word_is_ordinary() -> None:
    assert "went" not in NO_ORDINARY_WORDS
