"""Passages of the excerpts scored against a question: the terms they share, weighted by how rare
each term is among the passages, with small priors for rank and for steps that say what to do.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

from rag.answering.answerers._passages import Passage, cut_passages
from rag.answering.answerers.quotable import quotable_code, quotable_text
from rag.retrieval.evidence import Excerpt
from rag.retrieval.terms import question_terms, term_set

# Priors multiply the term score, so a passage without any shared term still scores zero.
_RANK_PRIOR = 0.2
_ACTION_PRIOR = 0.15
# A term in the section heading says the passage is about it, less surely than in the passage.
_HEADING_WEIGHT = 0.5

_ACTION_VERBS = frozenset(
    """add apply ask call check confirm cordon create declare delete disable drain enable
    escalate fail flush follow increase inspect keep look move notify open page patch post
    purge raise reduce remove restart restore roll route run scale send set start stop switch
    test turn update use verify wait warn""".split()
)
_ACTION_HEADING = re.compile(
    r"mitigat|remediat|resolv|recover|rollback|roll back|workaround|fix|steps|procedure", re.I
)


@dataclass(frozen=True)
class Scored:
    excerpt: Excerpt
    passage: Passage
    score: float


def score_passages(question: str, excerpts: Sequence[Excerpt]) -> list[Scored]:
    wanted = question_terms(question)
    if not wanted:
        return []
    candidates: list[tuple[Excerpt, Passage, frozenset[str], frozenset[str]]] = []
    for excerpt in excerpts:
        path = " ".join(excerpt.evidence.heading_path)
        for passage in cut_passages(excerpt.evidence.content):
            # A command without a quotable sentence before it still answers ("Top 5 oldest
            # active queries" is a heading over one SQL query): its own words score it.
            if quotable_text(passage):
                own = term_set(passage.text)
            elif passage.code is not None and quotable_code(passage.code):
                own = term_set(passage.code.body)
            else:
                continue
            heading = term_set(f"{path} {passage.heading}")
            candidates.append((excerpt, passage, own, heading))
    frequency: dict[str, int] = {}
    for _, _, own, _ in candidates:
        for term in own:
            frequency[term] = frequency.get(term, 0) + 1
    scored: list[Scored] = []
    for excerpt, passage, own, heading in candidates:
        overlap = 0.0
        for term, weight in wanted.items():
            share = 1.0 if term in own else _HEADING_WEIGHT if term in heading else 0.0
            rarity = math.log(1 + len(candidates) / max(frequency.get(term, 0), 1))
            overlap += share * weight * rarity
        if overlap > 0:
            action = _ACTION_PRIOR if is_action(excerpt, passage) else 0.0
            prior = 1 + _RANK_PRIOR / excerpt.n + action
            scored.append(Scored(excerpt, passage, overlap * prior))
    return scored


def is_action(excerpt: Excerpt, passage: Passage) -> bool:
    words = passage.text.lstrip("*_`").split(maxsplit=1)
    first = words[0].lower() if words else ""
    headings = " ".join((*excerpt.evidence.heading_path, passage.heading))
    return first in _ACTION_VERBS or _ACTION_HEADING.search(headings) is not None
