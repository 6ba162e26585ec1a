"""``ExtractiveAnswerer``: answer by quoting the runbook sentences that best match the question.

Deterministic and offline. It scores every passage (sentence, list item, table row) of the
excerpts by the question terms it shares, weighted by how rare each term is among the passages,
and quotes the best few verbatim with ``[n]`` markers, so its drafts pass ``verify_draft`` by
construction.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

from rag.answerers._passages import Passage, cut_passages
from rag.answers import Draft, DraftCitation
from rag.evidence import Excerpt
from rag.terms import question_terms
from rag.verify import MIN_QUOTE_WORDS, find_markers

MAX_SENTENCES = 3
MAX_QUOTES = 4
MAX_EXCERPTS = 2
MAX_CODE_CHARS = 400
# Longer passages read as a wall of text in Slack; a runbook rarely needs one to answer.
_MAX_PASSAGE_CHARS = 600
# Passages below this share of the best score add noise rather than an answer.
_RELATIVE_CUTOFF = 0.5
# Priors multiply the term score, so a passage without any shared term still scores zero.
_RANK_PRIOR = 0.2
_ACTION_PRIOR = 0.15
# A term in the section heading says the passage is about it, less surely than in the passage.
_HEADING_WEIGHT = 0.5

NOT_IN_SOURCES_TEXT = "The retrieved runbook excerpts do not cover this question."

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
class _Scored:
    excerpt: Excerpt
    passage: Passage
    score: float


class ExtractiveAnswerer:
    """Quotes a few sentences of the best excerpt (at most two excerpts); never calls a model."""

    name = "extractive"

    async def answer(
        self, question: str, excerpts: Sequence[Excerpt], *, correction: str | None = None
    ) -> Draft:
        # ``correction`` is ignored: verbatim quotes leave nothing to correct.
        chosen = _choose(_score(question, excerpts))
        if not chosen:
            return Draft("not_in_sources", NOT_IN_SOURCES_TEXT, (), provider=self.name)
        lines: list[str] = []
        citations: list[DraftCitation] = []
        for item in chosen:
            n = item.excerpt.n
            prefix = "- " if item.passage.kind == "item" else ""
            lines.append(f"{prefix}{item.passage.text} [{n}]")
            citations.append(DraftCitation(n, item.passage.text))
            code = item.passage.code
            if code is not None and len(citations) < MAX_QUOTES and _quotable_code(code.body):
                lines.append(f"{code.fence}{code.info}\n{code.body}\n{code.fence}\n[{n}]")
                citations.append(DraftCitation(n, code.body))
        return Draft("answered", "\n".join(lines), tuple(citations), provider=self.name)

    async def aclose(self) -> None:
        """Nothing to release: the extractive answerer holds no connections."""


def _score(question: str, excerpts: Sequence[Excerpt]) -> list[_Scored]:
    wanted = question_terms(question)
    if not wanted:
        return []
    candidates: list[tuple[Excerpt, Passage, frozenset[str], frozenset[str]]] = []
    for excerpt in excerpts:
        path = " ".join(excerpt.evidence.heading_path)
        for passage in cut_passages(excerpt.evidence.content):
            if _quotable(passage.text):
                own = frozenset(question_terms(passage.text))
                heading = frozenset(question_terms(f"{path} {passage.heading}"))
                candidates.append((excerpt, passage, own, heading))
    frequency: dict[str, int] = {}
    for _, _, own, _ in candidates:
        for term in own:
            frequency[term] = frequency.get(term, 0) + 1
    scored: list[_Scored] = []
    for excerpt, passage, own, heading in candidates:
        overlap = 0.0
        for term, weight in wanted.items():
            share = 1.0 if term in own else _HEADING_WEIGHT if term in heading else 0.0
            rarity = math.log(1 + len(candidates) / max(frequency.get(term, 0), 1))
            overlap += share * weight * rarity
        if overlap > 0:
            action = _ACTION_PRIOR if _is_action(excerpt, passage) else 0.0
            prior = 1 + _RANK_PRIOR / excerpt.n + action
            scored.append(_Scored(excerpt, passage, overlap * prior))
    return scored


def _quotable(text: str) -> bool:
    # A bracketed number in quoted prose would read as a citation marker in the answer text.
    return (
        len(text.split()) >= MIN_QUOTE_WORDS
        and len(text) <= _MAX_PASSAGE_CHARS
        and next(find_markers(text), None) is None
    )


def _quotable_code(body: str) -> bool:
    return len(body) <= MAX_CODE_CHARS and len(body.split()) >= MIN_QUOTE_WORDS


def _is_action(excerpt: Excerpt, passage: Passage) -> bool:
    first = passage.text.lstrip("*_`").split(maxsplit=1)[0].lower()
    headings = " ".join((*excerpt.evidence.heading_path, passage.heading))
    return first in _ACTION_VERBS or _ACTION_HEADING.search(headings) is not None


def _choose(scored: list[_Scored]) -> list[_Scored]:
    """The best passages from at most two excerpts, regrouped in reading order per excerpt."""
    ranked = sorted(scored, key=lambda s: (-s.score, s.excerpt.n, s.passage.position))
    if not ranked:
        return []
    chosen: list[_Scored] = []
    used: list[int] = []
    quoted: set[str] = set()
    for item in ranked:
        if item.score < _RELATIVE_CUTOFF * ranked[0].score or len(chosen) == MAX_SENTENCES:
            break
        # Neighbouring chunks overlap, so the same sentence can come from two excerpts.
        if item.passage.text in quoted:
            continue
        quoted.add(item.passage.text)
        if item.excerpt.n not in used:
            if len(used) == MAX_EXCERPTS:
                continue
            used.append(item.excerpt.n)
        chosen.append(item)
    return sorted(chosen, key=lambda s: (used.index(s.excerpt.n), s.passage.position))
