"""docutils' inline parser and reader, made linear for hostile reStructuredText.

docutils looks for each start-string's end-string in the rest of the paragraph, so a paragraph
of unpaired `` `x`` lines rescans itself once per line (100 KB: 45 s); and its report of
unknown reference targets replaces each one by ``parent.index``, so 8,000 dangling ``word_``
references in a paragraph took 19 s. Here an end-string search that found nothing is not run
again from further on (nothing can appear that was not there), a text block longer than
``MAX_INLINE_CHARS`` is read as plain text (its markup characters stay as written), so is the
rest of a document past ``MAX_INLINE_PROBLEMS`` unpaired start-strings, and unknown targets
are left as references, which read as their text.
"""

from __future__ import annotations

import re
from typing import Any

from docutils import nodes
from docutils.parsers.rst import states
from docutils.readers import standalone
from docutils.transforms import Transform
from docutils.transforms.references import DanglingReferences

# Far above a real paragraph (a few thousand characters); past it, no inline markup is read.
MAX_INLINE_CHARS = 20_000
# Unpaired markup docutils reports (each a warning and two nodes, about 0.2 ms): past this many
# in a document, the rest of it is read without inline markup.
MAX_INLINE_PROBLEMS = 1_000
# Inline nodes (references, emphasis, literals …) in a document, about 30 µs each: a runbook
# has hundreds; past this many the rest is read without inline markup.
MAX_INLINE_NODES = 20_000


class _TooManyProblems(Exception):
    pass


_END_PATTERNS = (
    "emphasis", "strong", "interpreted_or_phrase_ref", "literal", "target", "substitution_ref",
)  # fmt: skip


class _EndStringSearch:
    """An end-string pattern that remembers where, in the paragraph, a search found nothing.

    docutils searches the paragraph's remaining suffix, so a suffix's length gives its position;
    a search from further on can only find a match at its very first character, which docutils
    rejects as an empty span anyway.
    """

    def __init__(self, pattern: re.Pattern[str], inliner: LinearInliner) -> None:
        self._pattern = pattern
        self._inliner = inliner

    def search(self, text: str) -> re.Match[str] | None:
        start = self._inliner.paragraph_length - len(text)
        failed_from = self._inliner.no_end_from.get(self._pattern)
        if failed_from is not None and start >= failed_from:
            return None
        found = self._pattern.search(text)
        if found is None:
            self._inliner.no_end_from[self._pattern] = start
        return found


class LinearInliner(states.Inliner):
    paragraph_length = 0
    problems = 0
    inline_nodes = 0
    no_end_from: dict[re.Pattern[str], int] = {}

    def init_customizations(self, settings: Any) -> None:
        super().init_customizations(settings)
        for name in _END_PATTERNS:
            setattr(self.patterns, name, _EndStringSearch(getattr(self.patterns, name), self))

    def parse(
        self, text: str, lineno: int, memo: Any, parent: nodes.Element
    ) -> tuple[list[nodes.Node], list[nodes.system_message]]:
        spent = self.problems > MAX_INLINE_PROBLEMS or self.inline_nodes > MAX_INLINE_NODES
        if spent or len(text) > MAX_INLINE_CHARS:
            return [nodes.Text(text)], []
        outer = self.paragraph_length, self.no_end_from
        self.paragraph_length, self.no_end_from = len(text), {}
        try:
            parsed: tuple[list[nodes.Node], list[nodes.system_message]] = super().parse(
                text, lineno, memo, parent
            )
            self.inline_nodes += len(parsed[0])
            return parsed
        except _TooManyProblems:
            return [nodes.Text(text)], []
        finally:
            self.paragraph_length, self.no_end_from = outer

    def problematic(self, text: str, rawsource: str, message: nodes.system_message) -> Any:
        self.problems += 1
        if self.problems > MAX_INLINE_PROBLEMS:
            raise _TooManyProblems
        return super().problematic(text, rawsource, message)


# docutils builds its patterns from the names in ``vars(self.__class__)``: a subclass repeats them.
for _name, _value in vars(states.Inliner).items():
    if isinstance(_value, str) and not _name.startswith("__"):
        setattr(LinearInliner, _name, _value)


class LinearReader(standalone.Reader):  # type: ignore[type-arg]
    """The standalone reader without the report of unknown reference targets."""

    def get_transforms(self) -> list[type[Transform]]:
        transforms: list[type[Transform]] = super().get_transforms()
        return [transform for transform in transforms if transform is not DanglingReferences]
