"""The "also see" lines after an extractive answer's lead: one sentence each from the next sources
(with the command it introduces), the first being the lead runbook's procedure when the lead is
not what to do.
"""

from __future__ import annotations

from collections.abc import Sequence

from rag.answering.answerers._passages import Passage, cut_passages
from rag.answering.answerers.answer_lines import AnswerLines
from rag.answering.answerers.caveats import caveat_after, quotable_caveat
from rag.answering.answerers.passage_scores import Scored
from rag.answering.answerers.quotable import (
    code_lines,
    fenced,
    quotable_code,
    quotable_text,
    table_row,
)
from rag.answering.answers import DraftCitation
from rag.answering.claims import SENTENCE_GAP, cut_claims
from rag.retrieval.evidence import Excerpt
from rag.retrieval.rank import (
    question_intents,
    section_intents,
    sectioned_documents,
    under_section_word,
)

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


def also_see_procedure(
    answer: AnswerLines,
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
    if not quotable_text(passage) or table_row(text) or text in quoted or not _one_claim(text):
        return False
    if not quotable_caveat(caveat_after(content, passage)):
        return False
    code = passage.code
    if code is None:
        return not text.endswith(":")
    return quotable_code(code) and code_lines(code) <= MAX_ALSO_SEE_CODE_LINES


def _one_claim(text: str) -> bool:
    # Verification checks each sentence of an answer on its own, and the sentence that holds
    # the "Also see *…*:" label is no part of the quote: a list item of two sentences would
    # lose its first one, label and all, and read as a fragment.
    return len(cut_claims(text)) == 1


def _see(answer: AnswerLines, excerpt: Excerpt, passage: Passage) -> None:
    """One "also see" line: the source's section, the passage, and its command if it has one."""
    n = excerpt.n
    line = f"Also see *{_label(excerpt.evidence.section)}*: {passage.text}"
    citations = [DraftCitation(n, passage.text)]
    if passage.code is not None:
        line += f"\n{fenced(passage.code)}\n[{n}]"
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


def also_see(
    answer: AnswerLines, scored: list[Scored], seen: set[tuple[str, str]], limit: int
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
