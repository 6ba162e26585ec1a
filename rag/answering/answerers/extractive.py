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

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from rag.answering.answerers._passages import CodeBlock, Passage, Unit, cut_passages, cut_units
from rag.answering.answerers.caveats import caveat_after, quotable_caveat, set_variables
from rag.answering.answers import Draft, DraftCitation
from rag.answering.claims import SENTENCE_GAP, cut_claims
from rag.answering.verify import MIN_QUOTE_WORDS, find_markers, normalize_quote
from rag.retrieval.evidence import Excerpt
from rag.retrieval.rank import (
    question_intents,
    section_intents,
    sectioned_documents,
    under_section_word,
)
from rag.retrieval.terms import question_terms, term_set

# The answer quotes up to this many lines (a code block counts its own lines).
MAX_LEAD_LINES = 14
# A longer code block is left out whole: a responder must never copy half a command.
MAX_CODE_LINES = 15
# Other sources listed after the lead, one sentence each (with the command it introduces).
MAX_ALSO_SEE = 2
# An "also see" line carries a command of at most this many lines, or it picks another sentence.
MAX_ALSO_SEE_CODE_LINES = 6
# The procedure's "also see" line shows its first command when one is among its first this many
# sentences (after "Create a default storage class for OpenShift, virtualization, or both." and
# one remark comes "Create a default OpenShift storage class by running the following
# command:"); a command further down answers a later step, so the opening step shows instead.
_FIRST_COMMAND_WITHIN = 3
# A question that asks only these is about the alert, not about what to do.
_ABOUT_THE_ALERT = frozenset({"impact", "meaning"})
# Asked as a question that asks what to do, ``section_intents`` counts an operation's heading.
_WHAT_TO_DO = frozenset({"mitigation"})
# Longer passages read as a wall of text in Slack; a runbook rarely needs one to answer.
_MAX_PASSAGE_CHARS = 600
# A paragraph or step is quoted whole up to this length, else from its start up to a sentence.
_MAX_UNIT_CHARS = 900
# A paragraph counts one line per this many characters against the line cap.
_CHARS_PER_LINE = 200
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
# A sentence that sends the reader to another runbook by its id ("Follow `deploys/rollback`.",
# "If the primary is unreachable, switch to `database/primary-failover`."), not one that
# mentions it in passing ("contact details in `oncall/escalation-policy`").
_POINTER = re.compile(
    r"(?:^(?:- )?|[.;:,]\s+)(?:follow|see|use|switch to|continue with|go to|run)\s+"
    r"`([\w.-]+(?:/[\w.-]+)+)`",
    re.I,
)


@dataclass(frozen=True)
class _Scored:
    excerpt: Excerpt
    passage: Passage
    score: float


@dataclass
class _Answer:
    """What the answer shows so far: its lines, their citations and the lines they use."""

    lines: list[str] = field(default_factory=list)
    citations: list[DraftCitation] = field(default_factory=list)
    used: int = 0

    def add(self, text: str, citations: Sequence[DraftCitation], cost: int) -> None:
        self.lines.append(text)
        self.citations.extend(citations)
        self.used += cost

    @property
    def room(self) -> int:
        return MAX_LEAD_LINES - self.used


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
        scored = _score(question, excerpts)
        if not scored:
            return Draft("not_in_sources", NOT_IN_SOURCES_TEXT, (), provider=self.name)
        # The best-ranked excerpt that shares any term with the question leads.
        lead = min((item.excerpt for item in scored), key=lambda e: e.n)
        answer = _Answer()
        _quote_section(answer, lead, [s for s in scored if s.excerpt is lead])
        followed = _follow_pointer(answer, lead, excerpts)
        seen = {(e.evidence.document_id, e.evidence.section) for e in (lead, *followed)}
        shown = _also_see_procedure(answer, question, lead, excerpts, seen)
        _also_see(answer, scored, seen, MAX_ALSO_SEE - shown)
        set_variables(answer.lines, answer.citations, excerpts, lead.evidence.document_id)
        text = "\n".join(answer.lines)
        return Draft("answered", text, tuple(answer.citations), provider=self.name)

    async def aclose(self) -> None:
        """Nothing to release: the extractive answerer holds no connections."""


def _quote_section(
    answer: _Answer, excerpt: Excerpt, scored: list[_Scored], *, label: str = ""
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
        label = ""
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
    code = unit.code if unit.code is not None and _quotable_code(unit.code) else None
    if quote is None and code is None:
        return None
    if quote is not None and code is None and display.endswith(":") and unit.code is not None:
        return None  # it introduces a command too long to quote: never stop at its colon
    cost = (_text_cost(unit, display) if quote is not None else 0) + (
        _code_lines(code) if code is not None else 0
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
        parts.append(_fenced(code))
        citations.append(DraftCitation(n, code.quote))
    closing = "\n" if code is not None else " "
    return _Shown("\n".join(parts) + f"{closing}[{n}]", tuple(citations), cost)


def _unit_text(unit: Unit) -> tuple[str | None, str]:
    """(the unit's verbatim quote, how it reads), or (None, "") when it cannot be quoted.

    A long paragraph is quoted from its start up to the last sentence that fits."""
    if not unit.quote:
        return None, ""
    if len(unit.quote) <= _MAX_UNIT_CHARS and _quotable(unit.quote, _MAX_UNIT_CHARS):
        return unit.quote, unit.display
    if unit.kind != "prose":
        return None, ""
    kept: list[str] = []
    for passage in unit.passages:
        if len(" ".join([*kept, passage.text])) > _MAX_UNIT_CHARS:
            break
        kept.append(passage.text)
    text = " ".join(kept)
    return (text, text) if kept and _quotable(text, _MAX_UNIT_CHARS) else (None, "")


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


def _follow_pointer(answer: _Answer, lead: Excerpt, excerpts: Sequence[Excerpt]) -> list[Excerpt]:
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


def _quote_best_passage(answer: _Answer, excerpt: Excerpt, scored: list[_Scored]) -> None:
    """A section of short fragments only: its best passage alone, or else its best command
    (a section that is one query under its heading)."""
    n = excerpt.n
    prose = [s for s in scored if _quotable_text(s.passage)]
    top = max(prose or scored, key=lambda s: s.score).passage
    if _quotable_text(top):
        answer.add(f"{top.text} [{n}]", [DraftCitation(n, top.text)], 1)
    elif top.code is not None:
        answer.add(
            f"{_fenced(top.code)}\n[{n}]",
            [DraftCitation(n, top.code.quote)],
            _code_lines(top.code),
        )


def _also_see_procedure(
    answer: _Answer,
    question: str,
    lead: Excerpt,
    excerpts: Sequence[Excerpt],
    seen: set[tuple[str, str]],
) -> int:
    """When the lead is not what to do, the first "also see" line is its runbook's procedure
    (Mitigation, Remediation, …) among the sources: its opening step, or the step that
    carries its first command when one comes that early. Returns the lines it added (0 or 1).

    A question that asks only what an alert means or what it breaks ("at what point does it
    turn critical?") gets the other sources instead: the procedure answers another question."""
    asked = question_intents(question)
    if asked and asked <= _ABOUT_THE_ALERT:
        return 0
    sectioned = sectioned_documents(e.evidence for e in excerpts)
    if _is_procedure(lead, sectioned):
        return 0
    quoted = {c.quote for c in answer.citations}
    for procedure in excerpts:
        evidence = procedure.evidence
        where = (evidence.document_id, evidence.section)
        # Only a runbook written in the usual sections has "its procedure": in a long document
        # of many topics (an FAQ) a section headed "... how do I fix it?" answers another topic.
        if (
            evidence.document_id != lead.evidence.document_id
            or where in seen
            or not under_section_word(evidence, "mitigation")
        ):
            continue
        steps = [p for p in cut_passages(evidence.content) if _seeable(p, quoted, evidence.content)]
        if steps:
            opening = steps[:_FIRST_COMMAND_WITHIN]
            seen.add(where)
            _see(answer, procedure, next((p for p in opening if p.code is not None), steps[0]))
            return 1
    return 0


def _is_procedure(excerpt: Excerpt, sectioned: frozenset[str]) -> bool:
    """Whether the section says what to do: under Mitigation (or Remediation, …), or headed by
    an operation ("Unplanned failover")."""
    evidence = excerpt.evidence
    return under_section_word(evidence, "mitigation") or "mitigation" in section_intents(
        evidence, _WHAT_TO_DO, sectioned
    )


def _seeable(passage: Passage, quoted: set[str], content: str) -> bool:
    """Whether an "also see" line can show the passage: one quotable sentence, not yet quoted,
    with the command it introduces when it introduces one ("Raise `maxmemory` temporarily:"),
    with the restriction that follows it in the runbook ("Never … without the owning team"),
    and never a sentence cut off at its colon."""
    text = passage.text
    if not _quotable_text(passage) or _table_row(text) or text in quoted or not _one_claim(text):
        return False
    if not quotable_caveat(caveat_after(content, passage)):
        return False
    code = passage.code
    if code is None:
        return not text.endswith(":")
    return _quotable_code(code) and _code_lines(code) <= MAX_ALSO_SEE_CODE_LINES


def _one_claim(text: str) -> bool:
    # Verification checks each sentence of an answer on its own, and the sentence that holds
    # the "Also see *…*:" label is no part of the quote: a list item of two sentences would
    # lose its first one, label and all, and read as a fragment.
    return len(cut_claims(text)) == 1


def _see(answer: _Answer, excerpt: Excerpt, passage: Passage) -> None:
    """One "also see" line: the source's section, the passage, and its command if it has one."""
    n = excerpt.n
    line = f"Also see *{_label(excerpt.evidence.section)}*: {passage.text}"
    citations = [DraftCitation(n, passage.text)]
    if passage.code is not None:
        line += f"\n{_fenced(passage.code)}\n[{n}]"
        citations.append(DraftCitation(n, passage.code.quote))
    else:
        line += f" [{n}]"
    caveat = caveat_after(excerpt.evidence.content, passage)
    if caveat is not None:  # the restriction travels with its step, with its own marker
        line += f" {caveat.text} [{n}]"
        citations.append(DraftCitation(n, caveat.text))
    answer.lines.append(line)
    answer.citations.extend(citations)


def _label(section: str) -> str:
    # A heading that reads as the end of a sentence ("Mitigation › 4. Verify Resolution", "How
    # do you prevent DDoS attacks? › …") would cut the line in two for verification, and the
    # half with the label, carrying no marker, would be dropped: a no-break space keeps it whole.
    return SENTENCE_GAP.sub("\u00a0", section)


def _also_see(
    answer: _Answer, scored: list[_Scored], seen: set[tuple[str, str]], limit: int
) -> None:
    """One sentence from each of the next best sources, each from another section; a sentence
    that introduces a command ("Raise `maxmemory` temporarily:") carries it, or is passed
    over for another."""
    quoted = {c.quote for c in answer.citations}
    shown = 0
    for item in sorted(scored, key=lambda s: (s.excerpt.n, -s.score, s.passage.position)):
        if shown == limit:
            break
        evidence = item.excerpt.evidence
        where = (evidence.document_id, evidence.section)
        if where in seen or not _seeable(item.passage, quoted, evidence.content):
            continue
        seen.add(where)
        quoted.add(item.passage.text)
        shown += 1
        _see(answer, item.excerpt, item.passage)


def _holds(unit: Unit, position: int) -> bool:
    return any(passage.position == position for passage in unit.passages)


def _too_short(unit: Unit) -> bool:
    return bool(unit.quote) and len(unit.quote.split()) < MIN_QUOTE_WORDS


def _cost(units: Sequence[Unit]) -> int:
    return sum(
        (_text_cost(unit, unit.display) if unit.quote else 0)
        + (_code_lines(unit.code) if unit.code is not None else 0)
        for unit in units
    )


def _text_cost(unit: Unit, display: str) -> int:
    if unit.kind == "row":
        return display.count("\n") + 1
    return 1 + len(display) // _CHARS_PER_LINE


def _fenced(code: CodeBlock) -> str:
    return f"{code.fence}{code.info}\n{code.body}\n{code.fence}"


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
                own = term_set(passage.text)
            elif passage.code is not None and _quotable_code(passage.code):
                own = term_set(passage.code.body)
            else:
                continue
            heading = term_set(f"{path} {passage.heading}")
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


def _table_row(text: str) -> bool:
    # A row alone has lost its header ("| HPA ceiling | `kubectl … patch hpa …` |"): a
    # fragment in a one-line pointer, which could send a responder to undo the wrong thing.
    return text.lstrip().startswith("|")


def _quotable_text(passage: Passage) -> bool:
    return bool(passage.text) and _quotable(passage.text)


def _quotable(text: str, max_chars: int = _MAX_PASSAGE_CHARS) -> bool:
    # A bracketed number in quoted prose would read as a citation marker in the answer text.
    return (
        len(text.split()) >= MIN_QUOTE_WORDS
        and len(text) <= max_chars
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
