"""``ExtractiveAnswerer``: answer by quoting the runbook sentences that best match the question.

Deterministic and offline. It leads with the best-ranked section that shares the question's
terms, quoted verbatim in reading order: sentences, steps, and code blocks whole or not at all
(never half a command), under a short line cap. Then "also see" one sentence from each of the
next sources. Passages are scored by the question terms they share, weighted by how rare each
term is among the passages, to pick where the section starts answering and which sentence of
another source to show. Every line carries ``[n]`` and its quote is verbatim, so drafts pass
``verify_draft`` by construction.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

from rag.answerers._passages import CodeBlock, Passage, cut_passages
from rag.answers import Draft, DraftCitation
from rag.evidence import Excerpt
from rag.terms import question_terms
from rag.verify import MIN_QUOTE_WORDS, find_markers, normalize_quote

# The lead section is quoted up to this many lines (a code block counts its own lines).
MAX_LEAD_LINES = 14
# A longer code block is left out whole: a responder must never copy half a command.
MAX_CODE_LINES = 15
# Other sources listed after the lead, one sentence each.
MAX_ALSO_SEE = 2
# Longer passages read as a wall of text in Slack; a runbook rarely needs one to answer.
_MAX_PASSAGE_CHARS = 600
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
    """Quotes the best section verbatim, then names the other sources; never calls a model."""

    name = "extractive"

    async def answer(
        self, question: str, excerpts: Sequence[Excerpt], *, correction: str | None = None
    ) -> Draft:
        # ``correction`` is ignored: verbatim quotes leave nothing to correct.
        scored = _score(question, excerpts)
        if not scored:
            return Draft("not_in_sources", NOT_IN_SOURCES_TEXT, (), provider=self.name)
        # The best-ranked excerpt that shares any term with the question leads.
        lead = min((item.excerpt for item in scored), key=lambda e: e.n)
        lines, citations = _quote_section(lead, [s for s in scored if s.excerpt is lead])
        also_lines, also_citations = _also_see(lead, scored, {c.quote for c in citations})
        lines.extend(also_lines)
        citations.extend(also_citations)
        return Draft("answered", "\n".join(lines), tuple(citations), provider=self.name)

    async def aclose(self) -> None:
        """Nothing to release: the extractive answerer holds no connections."""


def _quote_section(
    excerpt: Excerpt, scored: list[_Scored]
) -> tuple[list[str], list[DraftCitation]]:
    """The section in reading order from where it starts answering, within the line cap."""
    n = excerpt.n
    passages = cut_passages(excerpt.evidence.content)
    best = max(scored, key=lambda s: (s.score, -s.passage.position)).passage.position
    start = 0 if _lines_up_to(passages, best) <= MAX_LEAD_LINES else max(best - 1, 0)
    lines: list[str] = []
    citations: list[DraftCitation] = []
    used = 0
    for passage in passages[start:]:
        if used >= MAX_LEAD_LINES:
            break
        if _quotable_text(passage):
            prefix = "- " if passage.kind == "item" else ""
            lines.append(f"{prefix}{passage.text} [{n}]")
            citations.append(DraftCitation(n, passage.text))
            used += 1
        code = passage.code
        if code is not None and _quotable_code(code) and used + _code_lines(code) <= MAX_LEAD_LINES:
            lines.append(f"{code.fence}{code.info}\n{code.body}\n{code.fence}\n[{n}]")
            citations.append(DraftCitation(n, code.quote))
            used += _code_lines(code)
    if not citations:
        # A section of short fragments only: quote its best passage alone, or else its best
        # command (a section that is one query under its heading).
        prose = [s for s in scored if _quotable_text(s.passage)]
        top = max(prose or scored, key=lambda s: s.score).passage
        if _quotable_text(top):
            lines.append(f"{top.text} [{n}]")
            citations.append(DraftCitation(n, top.text))
        elif top.code is not None:
            lines.append(
                f"{top.code.fence}{top.code.info}\n{top.code.body}\n{top.code.fence}\n[{n}]"
            )
            citations.append(DraftCitation(n, top.code.quote))
    return lines, citations


def _also_see(
    lead: Excerpt, scored: list[_Scored], quoted: set[str]
) -> tuple[list[str], list[DraftCitation]]:
    """One sentence from each of the next best sources, each from another section."""
    seen = {(lead.evidence.document_id, lead.evidence.section)}
    lines: list[str] = []
    citations: list[DraftCitation] = []
    for item in sorted(scored, key=lambda s: (s.excerpt.n, -s.score, s.passage.position)):
        evidence = item.excerpt.evidence
        where = (evidence.document_id, evidence.section)
        if (
            where in seen
            or not _quotable_text(item.passage)
            or item.passage.text in quoted
            or len(lines) == MAX_ALSO_SEE
        ):
            continue
        seen.add(where)
        quoted.add(item.passage.text)
        n = item.excerpt.n
        lines.append(f"Also see *{evidence.section}*: {item.passage.text} [{n}]")
        citations.append(DraftCitation(n, item.passage.text))
    return lines, citations


def _lines_up_to(passages: list[Passage], position: int) -> int:
    return sum(
        (1 if p.text else 0) + (_code_lines(p.code) if p.code is not None else 0)
        for p in passages
        if p.position <= position
    )


def _code_lines(code: CodeBlock) -> int:
    return code.body.count("\n") + 1


def _score(question: str, excerpts: Sequence[Excerpt]) -> list[_Scored]:
    wanted = question_terms(question)
    if not wanted:
        return []
    candidates: list[tuple[Excerpt, Passage, frozenset[str], frozenset[str]]] = []
    for excerpt in excerpts:
        path = " ".join(excerpt.evidence.heading_path)
        for passage in cut_passages(excerpt.evidence.content):
            # A command without a quotable sentence before it still answers ("Top 5 oldest
            # active queries" is a heading over one SQL query): its own words score it.
            if _quotable_text(passage):
                own = frozenset(question_terms(passage.text))
            elif passage.code is not None and _quotable_code(passage.code):
                own = frozenset(question_terms(passage.code.body))
            else:
                continue
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


def _quotable_text(passage: Passage) -> bool:
    return bool(passage.text) and _quotable(passage.text)


def _quotable(text: str) -> bool:
    # A bracketed number in quoted prose would read as a citation marker in the answer text.
    return (
        len(text.split()) >= MIN_QUOTE_WORDS
        and len(text) <= _MAX_PASSAGE_CHARS
        and next(find_markers(text), None) is None
    )


def _quotable_code(code: CodeBlock) -> bool:
    return (
        bool(code.body.strip())
        and _code_lines(code) <= MAX_CODE_LINES
        and len(normalize_quote(code.quote).split()) >= MIN_QUOTE_WORDS
    )


def _is_action(excerpt: Excerpt, passage: Passage) -> bool:
    words = passage.text.lstrip("*_`").split(maxsplit=1)
    first = words[0].lower() if words else ""
    headings = " ".join((*excerpt.evidence.heading_path, passage.heading))
    return first in _ACTION_VERBS or _ACTION_HEADING.search(headings) is not None
