"""Ordinary words: the words the embedding model's tokenizer keeps whole.

A WordPiece or BPE vocabulary holds the words frequent in general text as single tokens
("went", "bunch", "keyboard") and splits rare names and jargon into pieces ("patroni" ->
``patron ##i``, "rabbitmq", "ceph", "osd"). A question word the tenant's runbooks never use
is strong evidence that they do not cover the question only when it is of the second kind: a
runbook collection that never says "went" or "hammering" still answers "a node went notready"
(docs/how-it-works.md, "How the gate was calibrated"). The vocabulary is the model's own,
so the same split holds for every tenant and needs no word list of ours.
"""

from __future__ import annotations

import logging
from functools import lru_cache
from pathlib import Path

from tokenizers import Tokenizer

logger = logging.getLogger(__name__)

# English contractions typed without their apostrophe ("cant", "doesnt", "whats") come out of a
# WordPiece tokenizer as a whole word and one of these pieces.
_CONTRACTION_TAILS = frozenset({"##t", "##s"})


class OrdinaryWords:
    """``word in ordinary_words``: the model's tokenizer keeps the lowercase word whole.

    Built from a ``tokenizer.json``; without one (a model loaded from a hub cache, or a test
    embedder) no word is ordinary, so every word the tenant never uses counts against answering.
    """

    def __init__(self, tokenizer: Tokenizer | None) -> None:
        self._tokenizer = tokenizer
        if tokenizer is not None:
            # Single words only: the model's own padding and truncation would add tokens.
            tokenizer.no_padding()
            tokenizer.no_truncation()
        # Per instance: questions repeat their words, and one tokenizer call is not free.
        self._known = lru_cache(maxsize=16384)(self._kept_whole)

    @classmethod
    def from_model_dir(cls, model_dir: Path) -> OrdinaryWords:
        path = model_dir / "tokenizer.json"
        try:
            return cls(Tokenizer.from_file(str(path)))
        except Exception as exc:  # tokenizers raises its own untyped errors on a bad file
            logger.warning("no ordinary-word vocabulary from %s: %s", path, type(exc).__name__)
            return cls(None)

    def __contains__(self, word: object) -> bool:
        return isinstance(word, str) and self._known(word.lower())

    def _kept_whole(self, word: str) -> bool:
        if self._tokenizer is None or not word.isalpha():
            return False
        pieces = self._tokenizer.encode(word, add_special_tokens=False).tokens
        return len(pieces) == 1 or (len(pieces) == 2 and pieces[1] in _CONTRACTION_TAILS)


NO_ORDINARY_WORDS = OrdinaryWords(None)
