"""``ExtractiveAnswerer``: answer by quoting the runbook section that best matches the question.

Deterministic and offline. It leads with the best-ranked section that shares the question's
terms, quoted verbatim in reading order from the start of the section, sub-section or step that
answers (never from the middle of a paragraph): paragraphs, steps, tables and code blocks whole
or not at all (never half a command), under a short line cap, one citation marker per paragraph
or step. A section that points at another runbook among the sources ("Follow
`deploys/rollback`.") is followed by that runbook's steps. Then "also see" one sentence from
each of the next sources, with the command it introduces; when the lead is not what to do, the
first of them is the lead runbook's procedure (its Mitigation), whatever its rank, unless the
question asks only what the alert means or breaks. Passages are scored by the question
terms they share, weighted by how rare each term is among the passages, to pick where the
section starts answering and which sentence of another source to show. Every quote is
verbatim, so drafts pass ``verify_draft`` by construction.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from rag.answering.answerers._passages import Unit, cut_units
from rag.answering.answerers.also_see import MAX_ALSO_SEE, also_see, also_see_procedure
from rag.answering.answerers.answer_lines import MAX_LEAD_LINES, AnswerLines
from rag.answering.answerers.caveats import restricting_unit, set_variables
from rag.answering.answerers.passage_scores import Scored, score_passages
from rag.answering.answerers.quotable import (
    code_lines,
    fenced,
    quotable,
    quotable_code,
    quotable_text,
)
from rag.answering.answers import Draft, DraftCitation
from rag.answering.verify import MIN_QUOTE_WORDS, normalize_quote
from rag.retrieval.evidence import Excerpt

__all__ = ["MAX_ALSO_SEE", "MAX_LEAD_LINES", "NOT_IN_SOURCES_TEXT", "ExtractiveAnswerer"]

# A paragraph or step is quoted whole up to this length, else from its start up to a sentence.
_MAX_UNIT_CHARS = 900
# A paragraph counts one line per this many characters against the line cap.
_CHARS_PER_LINE = 200
NOT_IN_SOURCES_TEXT = "The retrieved runbook excerpts do not cover this question."

# A sentence that sends the reader to another runbook by its id ("Follow `deploys/rollback`.",
# "If the primary is unreachable, switch to `database/primary-failover`."), not one that
# mentions it in passing ("contact details in `oncall/escalation-policy`").
_POINTER = re.compile(
    r"(?:^(?:- )?|[.;:,]\s+)(?:follow|see|use|switch to|continue with|go to|run)\s+"
    r"`([\w.-]+(?:/[\w.-]+)+)`",
    re.I,
)


@dataclass(frozen=True)
class _Shown:
    """One unit as the answer shows it: its text with one marker, and what it quotes."""

    text: str
    citations: tuple[DraftCitation, ...]
    cost: int


class ExtractiveAnswerer:
    """Quotes the best section verbatim, then names the other sources; never calls a model."""

    name = "extractive"

    async def answer(
        self, question: str, excerpts: Sequence[Excerpt], *, correction: str | None = None
    ) -> Draft:
        # ``correction`` is ignored: verbatim quotes leave nothing to correct.
        scored = score_passages(question, excerpts)
        if not scored:
            return Draft("not_in_sources", NOT_IN_SOURCES_TEXT, (), provider=self.name)
        # The best-ranked excerpt that shares any term with the question leads.
        lead = min((item.excerpt for item in scored), key=lambda e: e.n)
        answer = AnswerLines()
        _quote_section(answer, lead, [s for s in scored if s.excerpt is lead])
        followed = _follow_pointer(answer, lead, excerpts)
        seen = {(e.evidence.document_id, e.evidence.section) for e in (lead, *followed)}
        shown = also_see_procedure(answer, question, lead, excerpts, seen)
        also_see(answer, scored, seen, MAX_ALSO_SEE - shown)
        set_variables(answer.lines, answer.citations, excerpts, lead.evidence.document_id)
        text = "\n".join(answer.lines)
        return Draft("answered", text, tuple(answer.citations), provider=self.name)

    async def aclose(self) -> None:
        """Nothing to release: the extractive answerer holds no connections."""


def _quote_section(
    answer: AnswerLines, excerpt: Excerpt, scored: list[Scored], *, label: str = ""
) -> None:
    """The section in reading order from where it starts answering, within the line cap.

    ``label`` (a sub-section's heading) leads the first unit shown, for a section quoted after
    another one."""
    units = cut_units(excerpt.evidence.content)
    if not units:
        return
    if scored:
        best = max(scored, key=lambda s: (s.score, -s.passage.position)).passage.position
        answering = next(i for i, unit in enumerate(units) if _holds(unit, best))
    else:
        answering = 0
    start = _opening(units, answering, answer.room)
    before = len(answer.citations)
    pending: Unit | None = None
    last = -1
    for index in range(start, len(units)):
        if answer.room <= 0:
            break
        unit = units[index]
        if pending is not None:
            unit = _joined(pending, unit, excerpt.evidence.content) or unit
            pending = None
        shown = _show(unit, excerpt.n, answer.room, label=label)
        if shown is None:
            if _too_short(unit) and unit.code is None:
                # A pointer too short to quote alone ("Follow `deploys/rollback`.") reads with
                # the step after it.
                pending = unit
                continue
            if index >= answering and answer.citations[before:]:
                break  # the next step does not fit: stop rather than skip it
            continue
        answer.add(shown.text, shown.citations, shown.cost)
        label, last = "", index
    caveat = restricting_unit(units, last) if last >= 0 and last + 1 < len(units) else None
    if caveat is not None and (shown := _show(caveat, excerpt.n, MAX_LEAD_LINES)) is not None:
        # The line cap stopped the quote before the runbook's restriction: it comes anyway.
        if shown.citations[0] not in answer.citations:
            answer.add(shown.text, shown.citations, shown.cost)
    if len(answer.citations) == before and scored:
        _quote_best_passage(answer, excerpt, scored)


def _opening(units: Sequence[Unit], answering: int, room: int) -> int:
    """Where the quote starts: the section's start, else the sub-section's, else the step's
    (with the sentence that introduces it, "Raise the limit:")."""
    if _cost(units[: answering + 1]) <= room:
        return 0
    heading = units[answering].heading
    first = answering
    while first > 0 and units[first - 1].heading == heading:
        first -= 1
    if _cost(units[first : answering + 1]) <= room:
        return first
    if answering > first and units[answering - 1].display.endswith(":"):
        return answering - 1
    return answering


def _show(unit: Unit, n: int, room: int, *, label: str = "") -> _Shown | None:
    """The unit with one marker after it (after its command, when it introduces one), or None
    when it cannot be quoted or does not fit in ``room`` lines."""
    quote, display = _unit_text(unit)
    code = unit.code if unit.code is not None and quotable_code(unit.code) else None
    if quote is None and code is None:
        return None
    if quote is not None and code is None and display.endswith(":") and unit.code is not None:
        return None  # it introduces a command too long to quote: never stop at its colon
    cost = (_text_cost(unit, display) if quote is not None else 0) + (
        code_lines(code) if code is not None else 0
    )
    if cost > room:
        return None
    parts: list[str] = []
    citations: list[DraftCitation] = []
    if quote is not None:
        bullet = "- " if unit.kind == "item" and not label else ""
        parts.append(f"*{label}*: {display}" if label else bullet + display)
        citations.append(DraftCitation(n, quote))
    elif label:
        parts.append(f"*{label}*:")
    if code is not None:
        parts.append(fenced(code))
        citations.append(DraftCitation(n, code.quote))
    closing = "\n" if code is not None else " "
    return _Shown("\n".join(parts) + f"{closing}[{n}]", tuple(citations), cost)


def _unit_text(unit: Unit) -> tuple[str | None, str]:
    """(the unit's verbatim quote, how it reads), or (None, "") when it cannot be quoted.

    A long paragraph is quoted from its start up to the last sentence that fits."""
    if not unit.quote:
        return None, ""
    if len(unit.quote) <= _MAX_UNIT_CHARS and quotable(unit.quote, _MAX_UNIT_CHARS):
        return unit.quote, unit.display
    if unit.kind != "prose":
        return None, ""
    kept: list[str] = []
    for passage in unit.passages:
        if len(" ".join([*kept, passage.text])) > _MAX_UNIT_CHARS:
            break
        kept.append(passage.text)
    text = " ".join(kept)
    return (text, text) if kept and quotable(text, _MAX_UNIT_CHARS) else (None, "")


def _joined(first: Unit, second: Unit, content: str) -> Unit | None:
    """``first`` and ``second`` read as one unit, when they are one verbatim run of ``content``
    (nothing hidden between them)."""
    if second.kind == "code" or first.heading != second.heading:
        return None
    quote = f"{first.quote} {second.quote}"
    if normalize_quote(quote) not in normalize_quote(content):
        return None
    display = f"{first.display} {second.display}"
    return Unit(
        second.kind, second.heading, first.passages + second.passages, quote, display, second.code
    )


def _follow_pointer(
    answer: AnswerLines, lead: Excerpt, excerpts: Sequence[Excerpt]
) -> list[Excerpt]:
    """When the quoted lead names another runbook among the sources (`deploys/rollback`),
    quote that runbook's sections next, in its own order: the pointer is the step, they are
    how to do it."""
    named = {match.group(1) for line in answer.lines for match in _POINTER.finditer(line)}
    named.discard(lead.evidence.document_id)
    target = next((e for e in excerpts if e.evidence.document_id in named), None)
    if target is None:
        return []
    # The sections under the same heading as the target's best-ranked one, in document order.
    parent = target.evidence.heading_path[:2]
    sections = sorted(
        (
            e
            for e in excerpts
            if e.evidence.document_id == target.evidence.document_id
            and e.evidence.heading_path[:2] == parent
        ),
        key=lambda e: e.evidence.chunk_id,
    )
    followed: list[Excerpt] = []
    for excerpt in sections:
        if answer.room <= 0:
            break
        label = excerpt.evidence.heading_path[-1] if len(excerpt.evidence.heading_path) > 2 else ""
        before = len(answer.citations)
        _quote_section(answer, excerpt, [], label=label)
        if len(answer.citations) > before:
            followed.append(excerpt)
    return followed


def _quote_best_passage(answer: AnswerLines, excerpt: Excerpt, scored: list[Scored]) -> None:
    """A section of short fragments only: its best passage alone, or else its best command
    (a section that is one query under its heading)."""
    n = excerpt.n
    prose = [s for s in scored if quotable_text(s.passage)]
    top = max(prose or scored, key=lambda s: s.score).passage
    if quotable_text(top):
        answer.add(f"{top.text} [{n}]", [DraftCitation(n, top.text)], 1)
    elif top.code is not None:
        answer.add(
            f"{fenced(top.code)}\n[{n}]",
            [DraftCitation(n, top.code.quote)],
            code_lines(top.code),
        )


def _holds(unit: Unit, position: int) -> bool:
    return any(passage.position == position for passage in unit.passages)


def _too_short(unit: Unit) -> bool:
    return bool(unit.quote) and len(unit.quote.split()) < MIN_QUOTE_WORDS


def _cost(units: Sequence[Unit]) -> int:
    return sum(
        (_text_cost(unit, unit.display) if unit.quote else 0)
        + (code_lines(unit.code) if unit.code is not None else 0)
        for unit in units
    )


def _text_cost(unit: Unit, display: str) -> int:
    if unit.kind == "row":
        return display.count("\n") + 1
    return 1 + len(display) // _CHARS_PER_LINE
