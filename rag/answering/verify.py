"""Check a draft's citations against the excerpts it was written from; keep only what holds.

A citation survives when its marker ``[n]`` names a supplied excerpt, its quote is a contiguous
run of at least four words of that chunk's full content, and the text both marks and declares it.
This proves provenance — the quoted words are in the runbook — not that the claim next to the
marker follows from them.

Every claim left in the text carries a surviving citation (``rag.answering.claims`` cuts the text
into
claims): a claim whose markers all failed is removed whole, not just its marker, and a claim with
no marker stays only as a verbatim part of a verified quote of the claim it leads into.

Quotes are compared after two normalisations applied to both sides: runs of whitespace collapse to
one space (models reflow text), and curly quotation marks become straight ones (models "fix"
them). Nothing else is forgiven: a quote that drops or adds Markdown emphasis or backticks,
changes case, or elides with "…" is not a contiguous excerpt.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rag.answering.answers import Citation, Draft, DraftCitation, DroppedCitation
from rag.answering.claims import Claim, cut_claims
from rag.answering.markers import find_markers, marker_numbers
from rag.retrieval.evidence import Excerpt

__all__ = ["MIN_QUOTE_WORDS", "Verification", "find_markers", "normalize_quote", "verify_draft"]

MIN_QUOTE_WORDS = 4

_CURLY = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"'})


@dataclass(frozen=True)
class Verification:
    """What survived verification; ``problems`` are sentences fit to show the model verbatim."""

    text: str
    citations: tuple[Citation, ...]
    dropped: tuple[DroppedCitation, ...]
    problems: tuple[str, ...]

    @property
    def ok(self) -> bool:
        return bool(self.citations)


def normalize_quote(text: str) -> str:
    """The form in which quotes and chunk content are compared."""
    return " ".join(text.translate(_CURLY).split())


def verify_draft(draft: Draft, excerpts: Sequence[Excerpt]) -> Verification:
    """Keep the draft's valid citations, drop the rest with a reason, and strip dead markers."""
    by_n = {excerpt.n: excerpt for excerpt in excerpts}
    marked = _marked_numbers(draft.text)
    kept: list[Citation] = []
    dropped: list[DroppedCitation] = []
    problems: list[str] = []
    seen: set[tuple[int, str]] = set()
    for cited in draft.citations:
        key = (cited.n, normalize_quote(cited.quote))
        if key in seen:
            continue
        seen.add(key)
        failure = _check(draft, cited, by_n, marked)
        if failure is None:
            kept.append(Citation(n=cited.n, quote=cited.quote, evidence=by_n[cited.n].evidence))
        else:
            dropped.append(DroppedCitation(n=cited.n, reason=failure[0]))
            problems.append(failure[1])
    declared = {cited.n for cited in draft.citations}
    for n in marked:
        if n in declared:
            continue
        dropped.append(DroppedCitation(n=n, reason="undeclared_marker"))
        problems.append(f"marker [{n}] in the text has no declared citation")
    valid = {citation.n for citation in kept}
    if draft.status == "not_in_sources":
        # Its text says what is missing, and claims nothing that would need a citation.
        text = _rewrite_markers(draft.text, valid)
    else:
        text, unsupported = _supported_claims(draft.text, kept)
        problems.extend(
            f"this sentence carries no citation: {claim.content}" for claim in unsupported
        )
    return Verification(
        text=text.strip(),
        citations=tuple(kept),
        dropped=tuple(dropped),
        problems=tuple(problems),
    )


def _supported_claims(text: str, kept: Sequence[Citation]) -> tuple[str, list[Claim]]:
    """The text without every claim that no verified citation supports; and those unmarked.

    A claim is supported by a surviving number among its own markers. A claim without markers
    ("To fail over:") must be a verbatim part of a verified quote of the next marked claim,
    which is how a quoted multi-sentence passage reads; anything else is dropped.
    """
    valid = {citation.n for citation in kept}
    quotes: dict[int, list[str]] = {}
    for citation in kept:
        quotes.setdefault(citation.n, []).append(normalize_quote(citation.quote))
    claims = cut_claims(text)
    shown: list[str] = []
    unmarked: list[Claim] = []
    for index, claim in enumerate(claims):
        if claim.numbers:
            if valid.intersection(claim.numbers):
                shown.append(_rewrite_markers(claim.text, valid))
            continue
        if not claim.says_something:
            shown.append(claim.text)
            continue
        following = next((c for c in claims[index + 1 :] if c.numbers), None)
        carrier = valid.intersection(following.numbers) if following else set()
        content = normalize_quote(claim.content)
        if any(content in quote for n in carrier for quote in quotes[n]):
            shown.append(claim.text)
        else:
            unmarked.append(claim)
    return "".join(shown), unmarked


def _check(
    draft: Draft, cited: DraftCitation, by_n: dict[int, Excerpt], marked: Sequence[int]
) -> tuple[str, str] | None:
    """``(reason, problem)`` for an invalid citation, None for a valid one."""
    n = cited.n
    if draft.status == "not_in_sources":
        return (
            "not_in_sources",
            f"citation [{n}] is declared, but a not_in_sources answer cites nothing",
        )
    excerpt = by_n.get(n)
    if excerpt is None:
        return "no_such_excerpt", f"citation [{n}] names no excerpt (there are {len(by_n)})"
    quote = normalize_quote(cited.quote)
    words = len(quote.split())
    if words < MIN_QUOTE_WORDS:
        return "quote_too_short", (
            f"the quote for [{n}] has {words} words; quotes need at least {MIN_QUOTE_WORDS}"
        )
    if quote not in normalize_quote(excerpt.evidence.content):
        return "quote_not_in_excerpt", (
            f"the quote for [{n}] is not a contiguous excerpt of excerpt {n}"
        )
    if n not in marked:
        return "unmarked", f"citation [{n}] is declared but never marked in the text"
    return None


def _marked_numbers(text: str) -> list[int]:
    """Each marked number once, in order of first appearance (so problems read in text order)."""
    numbers: dict[int, None] = {}
    for match in find_markers(text):
        numbers.update(dict.fromkeys(marker_numbers(match)))
    return list(numbers)


def _rewrite_markers(text: str, valid: set[int]) -> str:
    """Rewrite each marker to its surviving numbers; drop it, and the space before, if none are."""
    pieces: list[str] = []
    position = 0
    for match in find_markers(text):
        numbers = marker_numbers(match)
        alive = [n for n in dict.fromkeys(numbers) if n in valid]
        before = text[position : match.start()]
        if alive == numbers:
            pieces.append(before + match.group(0))
        elif alive:
            pieces.append(before + "[" + ", ".join(map(str, alive)) + "]")
        else:
            pieces.append(before.rstrip(" \t"))
        position = match.end()
    pieces.append(text[position:])
    return "".join(pieces)
