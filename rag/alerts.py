"""Alert posts as a query type: pull the alert's name, labels and summary out of the formatting.

A pasted Alertmanager, Grafana or PagerDuty notification is mostly formatting: ``[FIRING:1]``,
``severity=critical``, ``namespace=prod``. Those words are in every runbook and are not
evidence of which one applies; the alert's *name* and its summary are. ``parse_alert`` finds
them; ``Alert.search_text`` is what retrieval should look for. Pure functions, no I/O.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

# Labels whose values say what is wrong; the rest (severity, namespace, instance, pod...) say
# where or how loudly, which no runbook is chosen by.
_SUMMARY_KEYS = ("summary", "description", "message", "title")
_NAME_KEYS = ("alertname", "alert_name")

# The notification's first line: a status tag, then a title that often starts with the name.
_HEADER = re.compile(
    r"^(?::[a-z_]+:|[^\w\[#])*"
    r"(?:\[(?P<tag>(?i:FIRING|RESOLVED|ALERTING|TRIGGERED|OK|PENDING))(?::\s*\d+)?\]"
    r"|(?P<pd>\[#\d+\]\s*(?:Triggered|Acknowledged|Resolved):)"
    r"|(?P<og>\[Opsgenie\]\s*Alert\s*#\d+\s*\w+:)"
    r"|(?P<word>\*?(?:Triggered|TRIGGERED)\*?)"
    r"|(?P<pager>PagerDuty\s+INCIDENT\s+#\S+\s+TRIGGERED))"
    r"[* \t]*(?P<rest>.*)$",
    re.M,
)
_SOURCES = {
    "tag": "alertmanager",
    "pd": "pagerduty",
    "og": "opsgenie",
    "word": "pagerduty",
    "pager": "pagerduty",
}
_LABEL = re.compile(
    r"(?P<key>[A-Za-z_][A-Za-z0-9_.]*)\s*(?::|=)\s*"
    r"(?P<value>\"[^\"\n]*\"|'[^'\n]*'|`[^`\n]*`|[^\s,;()\[\]{}]+)"
)
_LINE_FIELD = re.compile(
    r"^[\s>*•\-]*\*?(?P<key>[A-Za-z][A-Za-z _]{1,30}?)\*?\s*(?::|=)\*?\s*(?P<value>.+?)\s*$", re.M
)
# ``KubePodCrashLooping``, ``etcdNoLeader``, ``component_saturation_slo_out_of_bounds``.
_NAME = re.compile(r"^(?:[A-Za-z][A-Za-z0-9]*[a-z0-9][A-Z][A-Za-z0-9]*|[a-z0-9]+(?:_[a-z0-9]+)+)$")
_URL = re.compile(r"https?://\S+")


@dataclass(frozen=True)
class Alert:
    """A parsed notification; ``name`` is None when its title is prose ("Gitaly is down")."""

    name: str | None
    source: str
    status: str | None = None
    summary: str | None = None
    labels: dict[str, str] = field(default_factory=dict)

    def search_text(self) -> str:
        """The name, its words (``KubeStatefulSetReplicasMismatch`` -> "stateful set replicas
        mismatch") and the summary: what a runbook about this alert would say."""
        parts = []
        if self.name:
            words = re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+", self.name)
            parts = [self.name, " ".join(words).lower()]
        if self.summary:
            parts.append(self.summary)
        return " ".join(parts)


def parse_alert(text: str) -> Alert | None:
    """The alert in ``text`` if it looks like a notification (a status tag or an alertname label),
    else None: an ordinary question is not an alert."""
    labels = _labels(text)
    header = _HEADER.search(text)
    name = next((labels[k] for k in _NAME_KEYS if labels.get(k)), None)
    if header is None and name is None:
        return None
    source, status, title = "alertmanager", None, ""
    if header is not None:
        kind = next(k for k in _SOURCES if header.group(k))
        source = _SOURCES[kind]
        status = (header.group("tag") or "TRIGGERED").upper()
        if status == "ALERTING" or "grafana" in text.lower():
            source = "grafana"
        title = header.group("rest")
        if not title.strip():
            title = _next_line(text, header.end())
    name = name or _first_name(title)
    summary = next((labels[k] for k in _SUMMARY_KEYS if labels.get(k)), None)
    if summary is None:
        after = header.end() if header else 0
        summary = _leftover(title, name) or _next_line(text, after, skip=title)
    return Alert(name=name, source=source, status=status, summary=summary or None, labels=labels)


def _labels(text: str) -> dict[str, str]:
    """``key=value`` pairs and ``Key: value`` lines (Slack templates, Grafana label lists).

    A one-token value wins for most keys (``alertname = X`` inside a longer line); a summary
    or description takes the whole rest of its line.
    """
    found: dict[str, str] = {}
    for match in _LABEL.finditer(text):
        value = _unquote(match.group("value"))
        if value:
            found.setdefault(match.group("key").lower(), value)
    for match in _LINE_FIELD.finditer(text):
        value = _unquote(match.group("value"))
        key = match.group("key").strip().lower().replace(" ", "_")
        if value and (key in _SUMMARY_KEYS or key not in found):
            found[key] = value
    return found


def _unquote(value: str) -> str:
    value = value.strip().strip("*").strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'`":
        value = value[1:-1]
    return value.strip()


def _first_name(title: str) -> str | None:
    """The alert name in a notification's title: its first CamelCase or snake_case word."""
    tokens: list[str] = re.findall(r"[A-Za-z0-9_]+", title)
    return next((token for token in tokens if _NAME.match(token)), None)


def _leftover(title: str, name: str | None) -> str | None:
    """The title without the name and its label list: Grafana and PagerDuty put the summary
    there ("Gitaly is down on file-23")."""
    after = title.split(name, 1)[-1] if name else title
    after = re.sub(r"\([^)]*\)", " ", _URL.sub(" ", after))
    after = _LABEL.sub(" ", after)
    cleaned = " ".join(after.replace("*", " ").split())
    return cleaned if len(cleaned.split()) >= 3 else None


def _next_line(text: str, start: int, skip: str = "") -> str:
    """The first later line that reads as prose, not as a label or a link (nor ``skip``)."""
    for line in text[start:].split("\n"):
        stripped = line.strip(" *_>`")
        if skip and stripped == skip.strip(" *_>`"):
            continue
        if len(stripped.split()) >= 4 and not _URL.search(stripped):
            if _LINE_FIELD.match(line) is None or ":" not in stripped.split()[0]:
                return stripped
    return ""
