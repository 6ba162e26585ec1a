"""The thread, organised: an incident thread becomes a runbook draft without a word invented.

The alert post becomes the symptoms; commands (code spans and blocks, in posting order) become
steps, each with who posted it and a link to its message; the messages saying it got better
("fixed", "recovered", "that did it", the alert's [RESOLVED] post) mark the fix, and the last
command that changed something before them is the mitigation; commands before it are the
diagnosis and those after it the verification. Questions nobody answered stay open questions.
Every text is redacted first.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from bot.core.drafts.commands import acts, commands_in, prose_of
from bot.core.drafts.headings import Headings
from bot.core.drafts.redaction import redact
from bot.core.drafts.thread import IncidentThread, ThreadMessage
from rag import Alert, parse_alert, state_changes_in

_FIXED = re.compile(
    r"\b(?:fixed|that did it|did the trick|recovered|resolved|mitigated|back to normal|"
    r"healthy again|green again|working again|works now|all good now|stable now)\b",
    re.I,
)
# Only after a command that acted: "disk going down now" is the fix working.
_IMPROVING = re.compile(r"\b(?:going down|dropping|recovering|improving|coming back)\b", re.I)
_QUESTION = re.compile(r"\?\s*(?:$|\n)|\?\s+[A-Z]")
_REPLY_WINDOW = 4
_FUNCTION_WORDS = frozenset(
    "the and for are was were you your any anyone someone know why what when where which who how "
    "does did this that these those there here have has had can could should would will just "
    "not but with from into about it's its our out now then than".split()
)
_LABELS_SHOWN = ("severity", "service", "namespace", "instance", "job", "cluster", "team")


@dataclass(frozen=True)
class Step:
    """A command from the thread, with the words around it and where it was posted."""

    command: str
    note: str
    author: str
    link: str
    changes_state: tuple[str, ...] = ()


@dataclass(frozen=True)
class Quote:
    text: str
    author: str
    link: str


@dataclass(frozen=True)
class RunbookDraft:
    title: str
    alert_name: str | None
    symptoms: tuple[str, ...]
    observations: tuple[Quote, ...]
    diagnosis: tuple[Step, ...]
    mitigation: tuple[Step, ...]
    fix: tuple[Quote, ...]
    verification: tuple[Step, ...]
    open_questions: tuple[Quote, ...]
    redactions: int
    thread_link: str
    channel_name: str
    headings: Headings = field(default_factory=Headings)

    @property
    def steps(self) -> tuple[Step, ...]:
        return self.diagnosis + self.mitigation + self.verification

    @property
    def empty(self) -> bool:
        """No command and no fix: nothing a runbook could say."""
        return not self.steps and not self.fix


def compose_draft(thread: IncidentThread, headings: Headings | None = None) -> RunbookDraft:
    """The draft of ``thread`` (redacted), under ``headings`` (the tenant's section names)."""
    redactions = 0
    messages: list[ThreadMessage] = []
    for message in thread.messages:
        clean = redact(message.text)
        redactions += clean.count
        messages.append(replace(message, text=clean.text))
    alert_at, alert = _alert(messages)
    resolved_at = _resolved(messages, alert_at)
    people = [
        (i, m)
        for i, m in enumerate(messages)
        if not m.from_bot and i != alert_at and m.text.strip()
    ]
    steps: list[tuple[int, Step]] = []
    for i, message in people:
        for command in commands_in(message.text):
            note = _note(message.text)
            steps.append(
                (i, Step(command, note, message.author, message.link, state_changes_in(command)))
            )
    fixed_at = next((i for i, m in people if _FIXED.search(_words(m.text))), None)
    if resolved_at is not None and (fixed_at is None or resolved_at < fixed_at):
        fixed_at = resolved_at
    mitigation_at, fix_quotes = _mitigation(steps, people, fixed_at)
    diagnosis = tuple(
        s for k, (_, s) in enumerate(steps) if mitigation_at is None or k < mitigation_at
    )
    mitigation = () if mitigation_at is None else (steps[mitigation_at][1],)
    verification = () if mitigation_at is None else tuple(s for _, s in steps[mitigation_at + 1 :])
    first_step = steps[0][0] if steps else len(messages)
    observations = tuple(
        Quote(_words(m.text), m.author, m.link)
        for i, m in people
        if i < first_step and not _QUESTION.search(m.text) and not m.text.lstrip().startswith("<@")
    )
    return RunbookDraft(
        title=(alert.name if alert and alert.name else f"Incident in #{thread.channel_name}"),
        alert_name=alert.name if alert else None,
        symptoms=_symptoms(alert),
        observations=observations,
        diagnosis=diagnosis,
        mitigation=mitigation,
        fix=fix_quotes,
        verification=verification,
        open_questions=_open_questions(people, fixed_at),
        redactions=redactions,
        thread_link=thread.link,
        channel_name=thread.channel_name,
        headings=headings or Headings(),
    )


def _alert(messages: list[ThreadMessage]) -> tuple[int | None, Alert | None]:
    for i, message in enumerate(messages):
        alert = parse_alert(message.text)
        if alert is not None and (alert.status or "").upper() != "RESOLVED":
            return i, alert
    return None, None


def _resolved(messages: list[ThreadMessage], alert_at: int | None) -> int | None:
    for i, message in enumerate(messages):
        if i == alert_at:
            continue
        alert = parse_alert(message.text)
        if alert is not None and (alert.status or "").upper() == "RESOLVED":
            return i
    return None


def _mitigation(
    steps: list[tuple[int, Step]], people: list[tuple[int, ThreadMessage]], fixed_at: int | None
) -> tuple[int | None, tuple[Quote, ...]]:
    """Which step fixed it (its index in ``steps``), and the messages that say so."""
    if fixed_at is None or not steps:
        return None, ()
    acting = [
        k
        for k, (i, s) in enumerate(steps)
        if i <= fixed_at and (acts(s.command) or s.changes_state)
    ]
    improved_at = fixed_at
    if acting:
        after = steps[acting[0]][0]
        improved_at = next(
            (i for i, m in people if after < i < fixed_at and _IMPROVING.search(m.text)), fixed_at
        )
        acting = [k for k in acting if steps[k][0] <= improved_at] or acting[:1]
    before = [k for k, (i, _) in enumerate(steps) if i <= improved_at]
    chosen = acting[-1] if acting else (before[-1] if before else None)
    said = {improved_at, fixed_at}
    quotes = tuple(Quote(_words(m.text), m.author, m.link) for i, m in people if i in said)
    return chosen, quotes


def _symptoms(alert: Alert | None) -> tuple[str, ...]:
    if alert is None:
        return ()
    lines = []
    if alert.name:
        shown = [f"{k} `{alert.labels[k]}`" for k in _LABELS_SHOWN if alert.labels.get(k)]
        lines.append(
            f"The alert `{alert.name}` fires" + (f" ({', '.join(shown)})" if shown else "") + "."
        )
    if alert.summary:
        summary = alert.summary
        if alert.name:  # the summary may repeat the name line ("Name - critical")
            summary = re.sub(rf"\b{re.escape(alert.name)}\b(\s+-\s+\w+)?", " ", summary)
        if summary.strip():
            lines.append(_words(summary))
    return tuple(lines)


def _open_questions(
    people: list[tuple[int, ThreadMessage]], fixed_at: int | None
) -> tuple[Quote, ...]:
    """Questions nobody answered: asked after the fix, or with no reply from someone else
    among the next few messages that takes up one of its words. A question that comes with
    its own command ("which topics are biggest? `kafka-log-dirs …`") answered itself."""
    found = []
    for k, (i, message) in enumerate(people):
        text = message.text
        if not _QUESTION.search(text) or text.lstrip().startswith(("<@", "@")) or commands_in(text):
            continue
        asked = _content_words(_question_sentence(text))
        replies = [
            m for _, m in people[k + 1 : k + 1 + _REPLY_WINDOW] if m.author_id != message.author_id
        ]
        answered = any(asked & _content_words(m.text) for m in replies)
        if not answered or (fixed_at is not None and i > fixed_at):
            found.append(Quote(_words(text), message.author, message.link))
    return tuple(found)


def _question_sentence(text: str) -> str:
    """The sentence that ends with the question mark."""
    before = text[: text.rindex("?")]
    return re.split(r"[.!?\n]", before)[-1]


def _content_words(text: str) -> set[str]:
    words = {w.lower() for w in re.findall(r"[A-Za-z][\w-]{2,}", text)}
    return words - _FUNCTION_WORDS


def _note(text: str) -> str:
    return prose_of(text)


def _words(text: str) -> str:
    return " ".join(text.split())
