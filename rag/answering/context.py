"""Choosing and bounding the excerpts an answerer sees."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rag.retrieval.evidence import Evidence, Excerpt
from rag.retrieval.retrieve import cap_per_document

_ELLIPSIS = " …"
# Below this an excerpt is too short to quote from; it is omitted rather than cut.
_MIN_EXCERPT_CHARS = 200


@dataclass(frozen=True)
class Context:
    excerpts: tuple[Excerpt, ...]
    omitted: tuple[int, ...]

    @property
    def chars(self) -> int:
        return sum(len(e.text) for e in self.excerpts)


def build_context(
    evidence: Sequence[Evidence], *, max_excerpts: int, per_document: int, max_chars: int
) -> Context:
    """Number the best evidence from 1 and fit it in ``max_chars`` of content.

    Only content is truncated, never the metadata that identifies the chunk; what does not fit
    is recorded as omitted so the trace can show it.
    """
    chosen = cap_per_document(evidence, per_document)[:max_excerpts]
    excerpts: list[Excerpt] = []
    omitted = [e.chunk_id for e in evidence if e not in chosen]
    budget = max_chars
    for item in chosen:
        if budget >= len(item.content):
            excerpts.append(Excerpt(len(excerpts) + 1, item, item.content, truncated=False))
            budget -= len(item.content)
        elif budget >= _MIN_EXCERPT_CHARS:
            cut = item.content[: budget - len(_ELLIPSIS)].rsplit(" ", 1)[0] + _ELLIPSIS
            excerpts.append(Excerpt(len(excerpts) + 1, item, cut, truncated=True))
            budget = 0
        else:
            omitted.append(item.chunk_id)
    return Context(tuple(excerpts), tuple(omitted))
