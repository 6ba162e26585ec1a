"""How an alert's name names a runbook when the two are not spelled alike.

Runbook collections name their files after the alert (``KubePodCrashLooping.md``), after the
symptom in kebab-case (``gitaly-down.md``), or with a suffix (``NorthboundStaleAlert.md``);
alerts arrive in CamelCase, snake_case or kebab-case, and some shorten a runbook's words to an
acronym (``MCDRebootError`` for ``MachineConfigDaemonRebootError``). ``RunbookNames`` answers
"which runbook is this?" for any of these, and only when exactly one runbook fits. Pure, no I/O.
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
