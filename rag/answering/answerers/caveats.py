"""What must travel with a quoted step: the restriction that follows it in the runbook, and the
assignment of a shell variable its command uses.

"Scale it to zero and say so in the incident channel." quoted alone, without the runbook's next
sentence "Never scale to zero anything in `ledger`, `payments` or `auth` without the owning
team.", tells an on-call to do what the runbook forbids. So a quoted sentence whose next
sentence restricts it carries that sentence, or is not shown. Likewise ``$R CLIENT LIST`` means
nothing without ``R="redis-cli --tls -h … -p 6379"``, set in an earlier block of the same
runbook: the assignment is quoted before the command when an excerpt of that runbook holds it.
Every text returned is a verbatim run of an excerpt's content, so it verifies as a quote.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from rag.answering.answerers._passages import Passage, Unit, cut_passages
from rag.answering.answers import DraftCitation
from rag.answering.claims import SENTENCE_GAP, cut_claims
from rag.answering.verify import MIN_QUOTE_WORDS, find_markers
from rag.retrieval.evidence import Excerpt

__all__ = [
    "VariableSetup",
    "caveat_after",
    "quotable_caveat",
    "restricting_unit",
    "restricts",
    "set_variables",
    "variable_setups",
]

# A sentence that limits what came before it: "Never …", "Do not …", "Only during a P1 …", or
# one that carves out cases ("… unless …", "… except …", "… without the owning team").
_OPENING = re.compile(
    r"^[*_`\s]*(?:never|do\s+(?:\*\*)?not(?:\*\*)?|don['’]t|only|avoid|not\s+(?:on|in|for|during))\b",
    re.IGNORECASE,
)
_CARVE_OUT = re.compile(
    r"\b(?:unless|except|without\s+(?:the\s+)?(?:owning\s+team|owner|approval|sign-off))\b",
    re.IGNORECASE,
)
# A caveat is quoted whole or the step is not shown: a long one is no "also see" line.
_MAX_CAVEAT_CHARS = 400


def restricts(sentence: str) -> bool:
    """Whether ``sentence`` restricts the step before it."""
    return _OPENING.search(sentence) is not None or _CARVE_OUT.search(sentence) is not None


def caveat_after(content: str, passage: Passage) -> Passage | None:
    """The sentence right after ``passage`` in ``content``, under the same heading, when it
    restricts it; None when no restriction follows."""
    following = next((p for p in cut_passages(content) if p.position == passage.position + 1), None)
    if following is None or following.heading != passage.heading or following.kind == "row":
        return None
    return following if restricts(following.text) else None


def restricting_unit(units: Sequence[Unit], shown: int) -> Unit | None:
    """The paragraph or step right after ``units[shown]``, under the same heading, when it
    restricts what was shown ("Do **not** change `maxmemory-policy` …"); else None."""
    if shown + 1 >= len(units):
        return None
    following = units[shown + 1]
    if following.heading != units[shown].heading or not following.passages:
        return None
    return following if restricts(following.passages[0].text) else None


def quotable_caveat(caveat: Passage | None) -> bool:
    """Whether a step can carry its caveat (None: it has none): one sentence that can be
    quoted on its own (words enough, not too long, no "[n]", no command)."""
    if caveat is None:
        return True
    text = caveat.text
    return (
        len(text.split()) >= MIN_QUOTE_WORDS
        and len(text) <= _MAX_CAVEAT_CHARS
        and caveat.code is None
        and next(find_markers(text), None) is None
        and len(cut_claims(text)) == 1
    )


@dataclass(frozen=True)
class VariableSetup:
    """The assignment line of a variable a quoted command uses, and the excerpt holding it."""

    name: str
    line: str
    n: int
    section: str


# `$R …`, `${R} …`: an upper-case shell variable; the environment's own are not the runbook's.
_USE = re.compile(r"\$\{?([A-Z][A-Z0-9_]*)\b")
_ENVIRONMENT = frozenset({"HOME", "PATH", "USER", "PWD", "SHELL", "HOSTNAME", "TERM", "LANG"})


def variable_setups(
    command: str, shown: str, excerpts: Sequence[Excerpt], document_id: str
) -> list[VariableSetup]:
    """The assignments of the variables ``command`` uses that neither it nor the answer shown
    so far (``shown``) sets, each found in an excerpt of the same runbook (``document_id``)."""
    setups: list[VariableSetup] = []
    for name in dict.fromkeys(_USE.findall(command)):
        if name in _ENVIRONMENT or _assigns(name, command) or _assigns(name, shown):
            continue
        for excerpt in sorted(excerpts, key=lambda e: e.evidence.chunk_id):
            if excerpt.evidence.document_id != document_id:
                continue
            line = _assignment(name, excerpt.evidence.content)
            if line is not None:
                setups.append(VariableSetup(name, line, excerpt.n, excerpt.evidence.section))
                break
    return setups


def _assigns(name: str, text: str) -> bool:
    return _assignment(name, text) is not None


# An assignment continued over more lines than this is not one a reader copies from a card.
_MAX_ASSIGNMENT_LINES = 4


def _assignment(name: str, text: str) -> str | None:
    """The whole assignment of ``name`` in ``text``: with its continuation lines (a trailing
    backslash), never half a command; None when there is none or it runs too long."""
    pattern = rf"^[ \t]*(?:export[ \t]+)?{re.escape(name)}=\S[^\n]*$"
    found = re.search(pattern, text, re.MULTILINE)
    if found is None:
        return None
    lines = [found.group(0)]
    rest = text[found.end() + 1 :].split("\n")
    while lines[-1].rstrip().endswith("\\"):
        if not rest or len(lines) == _MAX_ASSIGNMENT_LINES:
            return None
        lines.append(rest.pop(0))
    line = "\n".join(lines).strip()
    return line if len(line.split()) >= MIN_QUOTE_WORDS else None


def set_variables(
    lines: list[str], citations: list[DraftCitation], excerpts: Sequence[Excerpt], document_id: str
) -> None:
    """Insert, before each answer line whose command uses a variable set earlier in its
    runbook, the assignment quoted from the excerpt that holds it (with its citation)."""
    index = 0
    while index < len(lines):
        if "```" in lines[index]:
            shown = "\n".join(lines[:index])
            for setup in variable_setups(lines[index], shown, excerpts, document_id):
                # A no-break space keeps a heading that ends a sentence from cutting the claim.
                where = SENTENCE_GAP.sub("\u00a0", setup.section)
                block = f"```\n{setup.line}\n```"
                lines.insert(
                    index, f"With `{setup.name}` set as in *{where}*:\n{block}\n[{setup.n}]"
                )
                citations.append(DraftCitation(setup.n, setup.line))
                index += 1
        index += 1
