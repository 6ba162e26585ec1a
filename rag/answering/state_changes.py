"""Commands that change state: the one table of patterns every surface marks with a warning.

A command that deletes, kills, force-pushes, drops, scales to zero, reboots, stops or fails
over something is marked "changes state" wherever an answer quotes it; read-only diagnosis
(``kubectl get``, ``SELECT``, ``patronictl list``) is not. The table errs towards commands an
on-call must not paste without thinking; it is not a sandbox, and an unmarked command is not
declared safe.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rag.answering.indented_code import fence_indented_code
from rag.answering.markers import find_markers, marker_numbers
from rag.answering.state_change_patterns import STATE_CHANGES, StateChange

__all__ = [
    "CHANGES_STATE",
    "STATE_CHANGES",
    "AnswerStep",
    "StateChange",
    "answer_steps",
    "code_changes_state",
    "state_changes_in",
]

# The label every surface shows on a step or quote holding a state-changing command.
CHANGES_STATE = "⚠️ changes state"


# Fenced code blocks and inline code spans, where answers quote commands (an indented code
# block is read fenced).
_CODE = re.compile(r"^[ \t]*(`{3,}|~{3,})[^\n]*\n(.*?)^[ \t]*\1[ \t]*$|`([^`\n]+)`", re.M | re.S)


def state_changes_in(command: str) -> tuple[str, ...]:
    """What ``command`` (one or several lines) does that changes state, each kind once, in
    table order; empty for read-only commands."""
    return tuple(
        dict.fromkeys(change.does for change in STATE_CHANGES if change.pattern.search(command))
    )


def code_changes_state(text: str) -> tuple[str, ...]:
    """What the code quoted in ``text`` (fenced and indented blocks, inline spans) does that
    changes state; prose around it is not read ("do not delete the pods by hand" is no
    command)."""
    kinds: dict[str, None] = {}
    for match in _CODE.finditer(fence_indented_code(text)):
        kinds.update(dict.fromkeys(state_changes_in(match.group(2) or match.group(3) or "")))
    return tuple(kinds)


@dataclass(frozen=True)
class AnswerStep:
    """A run of answer lines up to the marker that closes it (a paragraph, or a step with
    its command), the excerpts it cites, and what its code does that changes state."""

    text: str
    numbers: tuple[int, ...]
    changes: tuple[str, ...]


_FENCE = re.compile(r"[ \t]*(`{3,}|~{3,})")
_CLOSING_MARKER = re.compile(r"\[\d+(?:\s*,\s*\d+)*\][.,;:!?)]*[ \t]*$")


def answer_steps(answer: str) -> list[AnswerStep]:
    """``answer`` cut into steps, in order; joining their texts with newlines gives it back.

    A paragraph that cites nothing and quotes no code (the "Who to contact: …" line an answer
    to "who do I page" opens with) is a step of its own, ended by its blank line: no label of
    the step after it belongs above it."""
    steps: list[AnswerStep] = []
    lines: list[str] = []
    fence: str | None = None
    for line in answer.split("\n"):
        lines.append(line)
        if (opened := _FENCE.match(line)) is not None:
            marker = opened.group(1)
            if fence is None:
                fence = marker
            elif marker.startswith(fence):
                fence = None
            continue
        if fence is None and (_CLOSING_MARKER.search(line) or _plain_paragraph(lines)):
            steps.append(_step("\n".join(lines)))
            lines = []
    if lines:
        steps.append(_step("\n".join(lines)))
    return steps


def _plain_paragraph(lines: list[str]) -> bool:
    """Whether ``lines`` are a paragraph ended by a blank line, without a marker or code."""
    if lines[-1].strip() or not any(line.strip() for line in lines):
        return False
    text = "\n".join(lines)
    return "`" not in text and "~~~" not in text and next(find_markers(text), None) is None


def _step(text: str) -> AnswerStep:
    numbers = tuple(n for match in find_markers(text) for n in marker_numbers(match))
    return AnswerStep(text, tuple(dict.fromkeys(numbers)), code_changes_state(text))
