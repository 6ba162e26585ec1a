"""Citations grouped by their number, the unit every surface shows a source line for."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from rag import Citation, Evidence


@dataclass(frozen=True)
class Source:
    """One citation number: several quotes may cite the same excerpt."""

    n: int
    evidence: Evidence
    quotes: tuple[str, ...]


def group_citations(citations: Iterable[Citation]) -> list[Source]:
    by_n: dict[int, list[Citation]] = {}
    for citation in citations:
        by_n.setdefault(citation.n, []).append(citation)
    return [
        Source(n, group[0].evidence, tuple(dict.fromkeys(c.quote for c in group)))
        for n, group in sorted(by_n.items())
    ]
