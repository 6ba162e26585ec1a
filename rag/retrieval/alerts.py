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
# Keys that hold the name in some templates and prose in others (``*Alert:* StatefulSet has not
# matched...``): they count only when the value is one identifier.
_MAYBE_NAME_KEYS = ("alert", "alert_rule", "rule", "rule_name", "monitor")
# Labels that name the failing part, not where it runs: GitLab's generic
# ``component_saturation_slo_out_of_bounds`` says what saturates only in ``component``.
_SUBJECT_KEYS = ("component", "service")
# PagerDuty's classic attachment says it fires only in a ``Status: Triggered`` field.
_FIRING_STATUSES = ("triggered", "firing", "alerting")
# Alertmanager's Slack template ends its ``*Alert:*`` line with the severity: "... - `warning`".
_SEVERITY_SUFFIX = re.compile(r"\s+-\s+`[^`]*`\s*$")
_RUNBOOK_KEYS = ("runbook_url", "runbook", "runbook_link")

# The notification's first line: a status tag, then a title that often starts with the name.
_HEADER = re.compile(
    r"^(?:(?i:subject|fwd?|re):[ \t]*|:[a-z_]+:|[^\w\[#\n])*"
    r"(?:\[(?P<tag>(?i:FIRING|RESOLVED|ALERTING|TRIGGERED|OK|PENDING))"
    r"(?::\s*\d+|[ \t]+on[ \t]+[^\]\n]*)?\]"
    r"|(?P<pd>\[#\d+\]\s*(?:Triggered|Acknowledged|Resolved):)"
    r"|(?P<og>\[Opsgenie\]\s*Alert\s*#\d+\s*\w+:)"
    r"|(?P<word>\*?(?:Triggered|TRIGGERED)\*?)"
    r"|(?P<pager>PagerDuty\s+INCIDENT\s+#\S+\s+TRIGGERED)"
    r"|(?P<alarm>ALARM:)|(?P<zabbix>Problem:)|(?P<ognew>New alert:))"
    r"[* \t]*(?P<rest>.*)$",
    re.M,
)
_SOURCES = {
    "tag": "alertmanager",
    "pd": "pagerduty",
    "og": "opsgenie",
    "word": "pagerduty",
    "pager": "pagerduty",
    "alarm": "cloudwatch",
    "zabbix": "zabbix",
    "ognew": "opsgenie",
}
_LABEL = re.compile(
    r"(?P<key>[A-Za-z_][A-Za-z0-9_.]*)[ \t]*(?::|=)[ \t]*"
    r"(?P<value>\"[^\"\n]*\"|'[^'\n]*'|`[^`\n]*`|[^\s,;()\[\]{}]+)"
)
_LINE_FIELD = re.compile(
    r"^[ \t>*•\-]*\*?(?P<key>[A-Za-z][A-Za-z _]{1,30}?)\*?[ \t]*(?::|=)\*?[ \t]*"
    r"(?P<value>.+?)[ \t]*$",
    re.M,
)
# ``KubePodCrashLooping``, ``etcdNoLeader``, ``component_saturation_slo_out_of_bounds``.
# ``kube-pod-crash-looping`` too, but only with three words or more: ``ingress-nginx`` or
# ``lb-prod`` is a place more often than an alert.
_NAME = re.compile(
    r"^(?:[A-Za-z][A-Za-z0-9]*[a-z0-9][A-Z][A-Za-z0-9]*|[a-z0-9]+(?:_[a-z0-9]+)+"
    r"|[a-z]+(?:-[a-z]+){2,})$"
)
# The tools that send alerts are CamelCase too ("[PagerDuty ALERT] You have 1 TRIGGERED...").
_TOOL_NAMES = frozenset(
    ("pagerduty", "opsgenie", "datadog", "cloudwatch", "victorops", "newrelic", "statuspage")
)
# A notification's own vocabulary, in every post whatever fired ("[PagerDuty ALERT] You have 1
# TRIGGERED Incident"): formatting, not evidence.
_NOTIFICATION_WORDS = _TOOL_NAMES | {"firing", "triggered", "alerting", "resolved", "grafana"}
_NAME_WORDS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
_URL = re.compile(r"https?://\S+")
# Tokens that say which instance fired, not what is wrong: pod and host names with hashes and
# numbers (``payments-api-7d9f8c-xk2lp``, ``ip-10-4-1-77.ec2.internal``), addresses, measured
# values (``96.4%``, ``312.4s``), ticket numbers (``#PD-23411``), mentions, priority tags and
# paths (``shop/checkout``, ``/dev/sda1``; not ``I/O``). No runbook is chosen by them, and
# words the tenant never uses count against answering.
_INSTANCE = re.compile(r"^(?:[@#/].*|\[?P\d\]?|(?=.*\d)(?=.*[-.:/%]).*\w.*|.*\w\w/\w\w.*)$")
_EDGE_PUNCTUATION = "\"'`()[]{}<>,;*_"


@dataclass(frozen=True)
class Alert:
    """A parsed notification; ``name`` is None when its title is prose ("Gitaly is down")."""

    name: str | None
    source: str
    status: str | None = None
    summary: str | None = None
    labels: dict[str, str] = field(default_factory=dict)
    # The tenant's runbook (document id) the alert resolved to by name or ``runbook_url``.
    runbook: str | None = None

    @property
    def name_in_tenant(self) -> str | None:
        """The name the tenant's runbooks go by: the resolved runbook's file name (the posted
        ``kube-pod-crash-looping`` is ``KubePodCrashLooping`` there), else the posted name."""
        return self.runbook.rsplit("/", 1)[-1] if self.runbook else self.name

    @property
    def runbook_url(self) -> str | None:
        """The runbook link the alert rule carries (``runbook_url`` annotation), if any."""
        return next((self.labels[k] for k in _RUNBOOK_KEYS if self.labels.get(k)), None)

    @property
    def generic(self) -> bool:
        """Whether the name is one rule for many parts (GitLab's
        ``component_saturation_slo_out_of_bounds``): the ``component`` label then says what fails,
        and no runbook need mention the name itself."""
        return bool(self.labels.get("component"))

    def search_text(self) -> str:
        """The name, its words (``KubeStatefulSetReplicasMismatch`` -> "stateful set replicas
        mismatch"), the summary and the labels naming the failing part: what a runbook about
        this alert would say, without the instance names and values no runbook mentions."""
        parts = []
        if self.name:
            parts = [self.name, " ".join(_NAME_WORDS.findall(self.name)).lower()]
        if self.runbook:
            # Its words, not its file name: ``NorthboundStaleAlert`` is a word no runbook
            # text uses, and a ``runbook_url`` alone must still bring the runbook's sections.
            words = " ".join(_NAME_WORDS.findall(self.runbook.rsplit("/", 1)[-1])).lower()
            if words not in parts:
                parts.append(words)
        if self.summary:
            parts.append(self.summary)
        for key in _SUBJECT_KEYS:
            value = self.labels.get(key)
            if value and value.lower() not in " ".join(parts).lower():
                parts.append(value)
        return " ".join(word for word in " ".join(parts).split() if not _is_noise(word))


def looks_like_alert_name(token: str) -> bool:
    """Whether ``token`` is shaped like an alert's name (``KubePodCrashLooping``,
    ``pg_xid_wraparound``, ``kube-pod-crash-looping``) and is no alerting tool's own name."""
    return _NAME.match(token) is not None and token.lower() not in _TOOL_NAMES


def parse_alert(text: str) -> Alert | None:
    """The alert in ``text`` if it looks like a notification (a status tag or an alertname label),
    else None: an ordinary question is not an alert."""
    labels = _labels(text)
    header = _HEADER.search(text)
    name = next((labels[k] for k in _NAME_KEYS if labels.get(k)), None) or next(
        (labels[k] for k in _MAYBE_NAME_KEYS if _NAME.match(labels.get(k, ""))), None
    )
    firing_field = labels.get("status", "").lower() in _FIRING_STATUSES
    if header is None and name is None and not firing_field:
        return None
    source, status, title = "alertmanager", None, ""
    if header is None and firing_field:
        source, status, title = "pagerduty", "TRIGGERED", _next_line(text, 0)
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
    # A prose title ("Gitaly is down on file-23"), the summary and the description: the one is
    # short, the other often names the symptom.
    found = [_leftover(title, name), *(labels[k] for k in _SUMMARY_KEYS if labels.get(k))]
    # ``*Alert:* Consumer group lag is growing`` is the summary when it is not the name.
    found += [_SEVERITY_SUFFIX.sub("", labels[k]) for k in _MAYBE_NAME_KEYS if labels.get(k)]
    found = [part for part in found if part != name]
    if len(found) == 1:
        # No summary field: the body's first prose line is what the title leaves out
        # (Grafana's and Datadog's message, PagerDuty's incident details).
        found.append(_next_line(text, header.end() if header else 0, skip=title))
    summary = " ".join(dict.fromkeys(part for part in found if part)) or None
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
        if value and (key in _SUMMARY_KEYS or key in _MAYBE_NAME_KEYS or key not in found):
            found[key] = value
    return found


def _unquote(value: str) -> str:
    value = value.strip().strip("*").strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'`":
        value = value[1:-1]
    return value.strip()


def _first_name(title: str) -> str | None:
    """The alert name in a notification's title: its first CamelCase or snake_case word, or a
    kebab-case one that opens the title (later in it, ``ingress-nginx-controller`` is where)."""
    tokens: list[str] = re.findall(r"[A-Za-z0-9_-]+", title)
    if tokens and "-" in tokens[0] and _NAME.match(tokens[0]):
        return tokens[0]
    words = [word for token in tokens for word in token.split("-")]
    return next(
        (word for word in words if _NAME.match(word) and word.lower() not in _TOOL_NAMES), None
    )


def _leftover(title: str, name: str | None) -> str | None:
    """The title without the name and its label list: Grafana and PagerDuty put the summary
    there ("Gitaly is down on file-23")."""
    after = title.split(name, 1)[-1] if name else title
    after = re.sub(r"\([^)]*\)", " ", _URL.sub(" ", after))
    after = _LABEL.sub(" ", after)
    cleaned = _unquote(" ".join(after.replace("*", " ").split()))
    return cleaned if len(cleaned.split()) >= 3 else None


def _next_line(text: str, start: int, skip: str = "") -> str:
    """The first later line that reads as prose, not as a label or a link (nor ``skip``)."""
    for line in text[start:].split("\n"):
        stripped = line.strip(" *_>`")
        if skip and stripped == skip.strip(" *_>`"):
            continue
        if len(stripped.split()) >= 4 and not _URL.search(stripped):
            # ``- alertname = X`` is a label; ``etcd cluster "etcd": members are down`` is prose.
            field_line = _LINE_FIELD.match(line)
            if field_line is None or len(field_line.group("key").split()) >= 3:
                return stripped
    return ""


def _is_noise(word: str) -> bool:
    """An instance token (``_INSTANCE``), a link or a notification word: not evidence."""
    core = word.strip(_EDGE_PUNCTUATION).rstrip(".:!?")
    return bool(core) and (
        _URL.match(core) is not None
        or _INSTANCE.match(core) is not None
        or core.lower() in _NOTIFICATION_WORDS
    )
