"""Is a chat post an alert notification, is it firing or resolved, and which alert is it.

Reads the words a surface finds in a post (``bot.slack.alerts`` in Slack's text, attachments and
blocks; ``bot.teams.alerts`` in a Teams message's HTML and cards) and recognises the status
lines monitoring tools put first: Alertmanager and Grafana (``[FIRING:1] Name``,
``[Alerting] Name``, ``[OK] Name``), PagerDuty (``Triggered #123: Title``), Datadog
(``Triggered: [P1] Title``, ``Recovered: …``), Opsgenie (``New alert: "Title"``) and
prometheus-msteams (``Prometheus Alert (Firing)``, the name in an ``alertname`` fact).
Anything else, and any state that is neither clearly firing nor clearly resolved (acknowledged,
no data, pending), is not an alert post: the caller stays silent when unsure.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Literal

State = Literal["firing", "resolved"]

_FIRING_WORDS = {"firing", "alerting", "triggered", "re-triggered", "retriggered", "renotify"}
_FIRING_WORDS |= {"warn", "new alert", "alert created"}
_RESOLVED_WORDS = {"resolved", "recovered", "ok", "closed", "alert closed"}
_UNSURE_WORDS = {"acknowledged", "no data", "pending", "escalated", "snoozed", "muted"}
_WORDS = "|".join(
    re.escape(w) for w in sorted(_FIRING_WORDS | _RESOLVED_WORDS | _UNSURE_WORDS, key=len)[::-1]
)
# Alertmanager's (and Grafana unified alerting's) title: the alert name follows the state.
_ALERTMANAGER = re.compile(r"\[(FIRING|RESOLVED)(?::\d+)?\]\s*([A-Za-z][\w.:-]*)", re.IGNORECASE)
# Other tools open a line with the state: "[Alerting] X", "Triggered #48213: X",
# ":red_circle: *Triggered* #48213 X", "Recovered: [P1] X", "New alert: \"X\"".
# The state word is bracketed, bold, or followed by ":" or "#123", as tools write it (and as
# people chatting rarely do: "ok let's do it" is not a recovery notice).
_STATE_LINE = re.compile(
    rf"^(?::[\w+-]+:\s*)?(?:\[opsgenie\]\s*)?"
    rf"(?:[\[*]({_WORDS})[\]*]|({_WORDS})(?=\s*(?::|#\d)))"
    r"[\s:*]*(?:#\d+\b)?[\s:]*(.*)$",
    re.IGNORECASE,
)
# PagerDuty's classic attachment: the state in a "Status" field, the incident as the title.
_STATUS_FIELD = re.compile(rf"^status:\s*({_WORDS})\s*$", re.IGNORECASE)
# prometheus-msteams' default card: the state in its title, the name only among the facts.
_PROMETHEUS_TITLE = re.compile(r"^Prometheus Alert \((Firing|Resolved)\)$", re.IGNORECASE)
_ALERTNAME_FACT = re.compile(r"^alertname\s*[:=]\s*([A-Za-z][\w.:-]*)$", re.IGNORECASE)
_INCIDENT_NUMBER = re.compile(r"^#\d+:?\s*")
_PRIORITY = re.compile(r"^\[(?:P\d|SEV-?\d|critical|warning|high|low)\]\s*", re.IGNORECASE)
# Labels that say which alert this is; pods, severities and values change between repeats.
KEY_LABELS = (
    "service",
    "app",
    "namespace",
    "cluster",
    "env",
    "environment",
    "region",
    "job",
    "instance",
    "host",
    "deployment",
    "container",
)
_LABEL = re.compile(
    rf"\b({'|'.join(KEY_LABELS)})[*_`]*\s*[=:][\s*_`\"']*([A-Za-z0-9][\w./-]*)", re.IGNORECASE
)
NAME_MAX = 200


@dataclass(frozen=True)
class AlertText:
    """``question``: the post's words, one line each; ``hints``: most specific label first."""

    question: str
    hints: tuple[str, ...]


@dataclass(frozen=True)
class AlertPost:
    state: State
    name: str
    labels: tuple[tuple[str, str], ...]  # key labels, sorted by key
    text: AlertText  # the whole post, for the question and scope hints

    @property
    def fingerprint(self) -> str:
        """The alert's identity: its name and key labels, case-insensitive."""
        labels = ",".join(f"{k}={v.lower()}" for k, v in self.labels)
        return hashlib.sha256(f"{self.name.lower()}|{labels}".encode()).hexdigest()[:32]

    def scope_hints(self) -> tuple[str, ...]:
        """Service-like labels first, then whatever the post's reader found."""
        labels = dict(self.labels)
        preferred = [labels[k] for k in ("service", "app", "container", "namespace") if k in labels]
        return tuple(dict.fromkeys([*preferred, *self.text.hints]))


def classify_alert_text(text: AlertText) -> AlertPost | None:
    """The alert a post's words announce, or None when they are not (clearly) an alert
    notification."""
    lines = text.question.splitlines()
    found = (
        _alertmanager_title(lines)
        or _state_line(lines)
        or _status_field(lines)
        or _prometheus_card(lines)
    )
    if found is None:
        return None
    state, name = found
    if state is None or not name:
        return None
    return AlertPost(state=state, name=name, labels=_key_labels(text.question), text=text)


def _alertmanager_title(lines: list[str]) -> tuple[State | None, str] | None:
    for line in lines:
        if match := _ALERTMANAGER.search(line):
            state: State = "firing" if match[1].upper() == "FIRING" else "resolved"
            return state, match[2]
    return None


def _state_line(lines: list[str]) -> tuple[State | None, str] | None:
    for line in lines:
        if match := _STATE_LINE.match(line.strip()):
            return _state_of(match[1] or match[2]), _alert_name(match[3])
    return None


def _status_field(lines: list[str]) -> tuple[State | None, str] | None:
    for line in lines:
        if match := _STATUS_FIELD.match(line.strip()):
            return _state_of(match[1]), _alert_name(_INCIDENT_NUMBER.sub("", lines[0]))
    return None


def _prometheus_card(lines: list[str]) -> tuple[State | None, str] | None:
    for line in lines:
        if match := _PROMETHEUS_TITLE.match(line.strip()):
            names = (_ALERTNAME_FACT.match(other.strip()) for other in lines)
            name = next((found[1] for found in names if found), "")
            return _state_of(match[1]), name[:NAME_MAX]
    return None


def _state_of(word: str) -> State | None:
    word = word.lower()
    if word in _FIRING_WORDS:
        return "firing"
    return "resolved" if word in _RESOLVED_WORDS else None


def _alert_name(rest: str) -> str:
    name = _PRIORITY.sub("", rest.strip().strip("*_`\"'“”").strip())
    return " ".join(name.split())[:NAME_MAX]


def _key_labels(text: str) -> tuple[tuple[str, str], ...]:
    labels: dict[str, str] = {}
    for key, value in _LABEL.findall(text):
        labels.setdefault(key.lower(), value)
    return tuple(sorted(labels.items()))
