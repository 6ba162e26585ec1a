"""How an alert's name names a runbook when the two are not spelled alike.

Runbook collections name their files after the alert (``KubePodCrashLooping.md``), after the
symptom in kebab-case (``gitaly-down.md``), or with a suffix (``NorthboundStaleAlert.md``);
alerts arrive in CamelCase, snake_case or kebab-case, and some shorten a runbook's words to an
acronym (``MCDRebootError`` for ``MachineConfigDaemonRebootError``). ``RunbookNames`` answers
"which runbook is this?" for any of these, and only when exactly one runbook fits. ``near``
forgives a typo ("KubePodCrashLoping"): one edit in a long name, two in a very long one, when
one runbook is closer than any other. Pure, no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

# Shorter names ("db", "api") match too much to be a useful signal.
MIN_NAME_LENGTH = 4
# Words a runbook's file name or an alert's name may carry on top of the other's.
_FILLERS = ("alerts", "alert", "runbook", "rule")
_NOT_ALPHANUMERIC = re.compile(r"[^a-z0-9]")
_WORDS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
# An acronym stands for two to five words.
_ACRONYM = re.compile(r"^[A-Z]{2,5}$")
# How many typos a name may carry, by its length (Damerau-Levenshtein: a swap of two neighbours
# is one): none below 8 letters, where one edit turns a name into another word.
_TYPOS = ((16, 2), (8, 1))


def squash(name: str) -> str:
    """``kube-pod-crash-looping`` and ``KubePodCrashLooping`` both read ``kubepodcrashlooping``."""
    return _NOT_ALPHANUMERIC.sub("", name.lower())


def name_words(name: str) -> tuple[str, ...]:
    """``MCDRebootError`` -> MCD, Reboot, Error (case kept: capitals mark an acronym)."""
    return tuple(_WORDS.findall(name))


@dataclass(frozen=True)
class RunbookNames:
    """A tenant's runbook names (file names and titles) by spelling-free key and by words."""

    squashed: dict[str, str]
    worded: tuple[tuple[tuple[str, ...], str], ...]

    @classmethod
    def build(cls, names: Iterable[tuple[str, str]]) -> RunbookNames:
        """From ``(name, document_id)`` pairs; the first document of a name keeps it."""
        squashed: dict[str, str] = {}
        worded: dict[tuple[str, ...], str] = {}
        for name, document_id in names:
            squashed.setdefault(squash(name), document_id)
            words = name_words(name)
            if len(words) >= 2:
                worded.setdefault(words, document_id)
        return cls(squashed, tuple(worded.items()))

    def runbook_for(self, name: str) -> str | None:
        """The one runbook ``name`` spells, else None."""
        key = squash(name)
        if len(key) < MIN_NAME_LENGTH:
            return None
        spellings = [key]
        spellings += [key.removesuffix(f) for f in _FILLERS if key.endswith(f)]
        spellings += [key + f for f in _FILLERS]
        found = next((self.squashed[s] for s in spellings if s in self.squashed), None)
        return found if found is not None else self._by_acronym(name_words(name))

    def near(self, name: str) -> str | None:
        """The one runbook whose name ``name`` misspells within its typo allowance, when no
        other runbook's name is as close; None for an exact name (``runbook_for`` finds it)."""
        key = squash(name)
        allowed = next((typos for length, typos in _TYPOS if len(key) >= length), 0)
        best, found = allowed + 1, set[str]()
        for other, document_id in self.squashed.items():
            if abs(len(other) - len(key)) > min(best, allowed):
                continue
            distance = edit_distance(key, other, within=min(best, allowed))
            if distance is None or distance == 0:
                continue
            if distance < best:
                best, found = distance, {document_id}
            elif distance == best:
                found.add(document_id)
        return next(iter(found)) if len(found) == 1 else None

    def _by_acronym(self, words: tuple[str, ...]) -> str | None:
        if len(words) < 2:
            return None
        fits = {
            document_id
            for theirs, document_id in self.worded
            if _spells(words, theirs, expanded=False) or _spells(theirs, words, expanded=False)
        }
        return next(iter(fits)) if len(fits) == 1 else None


def _spells(short: tuple[str, ...], long: tuple[str, ...], *, expanded: bool) -> bool:
    """Whether ``short`` is ``long`` with at least one run of words written as its initials."""
    if not short:
        return expanded and not long
    head, rest = short[0], short[1:]
    if long and head.lower() == long[0].lower() and _spells(rest, long[1:], expanded=expanded):
        return True
    size = len(head)
    return (
        _ACRONYM.match(head) is not None
        and len(long) >= size
        and all(
            word[0].lower() == letter.lower()
            for word, letter in zip(long[:size], head, strict=True)
        )
        and _spells(rest, long[size:], expanded=True)
    )


def edit_distance(a: str, b: str, *, within: int) -> int | None:
    """The Damerau-Levenshtein distance of ``a`` and ``b`` (optimal string alignment: an
    insertion, deletion, substitution or swap of neighbours is one edit), or None when it is
    more than ``within``. Only the band of cells within ``within`` of the diagonal is filled,
    and a row past the bound ends the search: a tenant's names are compared one by one."""
    if abs(len(a) - len(b)) > within:
        return None
    far = within + 1
    previous: list[int] = []
    row = [j if j <= within else far for j in range(len(b) + 1)]
    for i in range(1, len(a) + 1):
        before, previous = previous, row
        row = [i if i <= within else far] + [far] * len(b)
        for j in range(max(1, i - within), min(len(b), i + within) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            best = min(previous[j] + 1, row[j - 1] + 1, previous[j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                best = min(best, before[j - 2] + 1)
            row[j] = min(best, far)
        if min(row) > within:
            return None
    return row[len(b)] if row[len(b)] <= within else None
