"""Reading an alert post: its words from ``text``, ``attachments`` and ``blocks``, and its labels.

Monitoring bots put most of an alert in structured attachments or blocks (PagerDuty, Datadog,
Alertmanager templates), often with an almost empty ``text``; reading only ``text`` would ask
about nothing. Service labels and alert names found here become scope hints when they name a
service the tenant's runbooks know.
"""

from __future__ import annotations

import re
from typing import Any

from bot.core.alerts.classifier import AlertText

# <https://x|label> → label, <https://x> → https://x, <@U1> / <!here> → dropped.
_LINK = re.compile(r"<((?:https?|mailto):[^|>]+)(?:\|([^>]*))?>")
_SPECIAL = re.compile(r"<[@#!][^>]*>")
_FIRING = re.compile(r"\[(?:FIRING|RESOLVED)(?::\d+)?\]\s*([A-Za-z][\w.-]*)")
# service=kafka, service="kafka", service:kafka (Datadog tags), • *service:* `kafka` (templates)
_LABEL = re.compile(
    r"\b(service|app|alertname)[*_`]*\s*[=:][\s*_`\"']*([A-Za-z0-9][\w.-]*)", re.IGNORECASE
)
_SERVICE_FIELD_TITLES = frozenset({"service", "services", "impacted service", "component"})
_SKIPPED_BLOCKS = frozenset({"actions", "image", "divider", "input", "file", "video"})


def read_message(message: dict[str, Any]) -> AlertText:
    lines: dict[str, None] = {}  # distinct lines in order (intake reads posts before the ack)
    service_fields: list[str] = []
    _add(lines, message.get("text"))
    for attachment in _dicts(message.get("attachments")):
        before = len(lines)
        for key in ("pretext", "author_name", "title", "text"):
            _add(lines, attachment.get(key))
        for field in _dicts(attachment.get("fields")):
            title, value = _plain(field.get("title")), _plain(field.get("value"))
            if title.lower() in _SERVICE_FIELD_TITLES and value:
                service_fields.append(value)
            _add(lines, f"{title}: {value}" if title and value else title or value)
        if len(lines) == before:  # the fallback only repeats the rest, when there is a rest
            _add(lines, attachment.get("fallback"))
    for block in _dicts(message.get("blocks")):
        if str(block.get("type")) not in _SKIPPED_BLOCKS:
            for text in _block_texts(block):
                _add(lines, text)
    text = "\n".join(lines)
    return AlertText(question=text, hints=_hints(text, service_fields))


def fit_question(text: str, max_chars: int) -> str:
    """Whitespace collapsed and cut at a word boundary, so a long alert still gets an answer.

    Line breaks stay (blank lines go): the alert parser reads ``summary: ...`` and
    ``- alertname = ...`` lines as fields only while they are lines.
    """
    lines = (" ".join(line.split()) for line in text.splitlines())
    collapsed = "\n".join(line for line in lines if line)
    if len(collapsed) <= max_chars:
        return collapsed
    cut = collapsed[:max_chars]
    boundary = max(cut.rfind(" "), cut.rfind("\n"))
    return cut[:boundary].rstrip() if boundary > 0 else cut


def _hints(text: str, service_fields: list[str]) -> tuple[str, ...]:
    labels = [(key.lower(), value) for key, value in _LABEL.findall(text)]
    ordered = [
        *service_fields,
        *(value for key, value in labels if key == "service"),
        *(value for key, value in labels if key == "app"),
        *(value for key, value in labels if key == "alertname"),
        *_FIRING.findall(text),
    ]
    return tuple(dict.fromkeys(ordered))


def _block_texts(value: Any) -> list[str]:
    """Every text in a block (section, header, context, fields, rich text), in order."""
    if isinstance(value, list):
        return [text for item in value for text in _block_texts(item)]
    if not isinstance(value, dict):
        return []
    if value.get("type") in ("button", "overflow", "static_select", "image"):
        return []
    texts = []
    if isinstance(value.get("text"), str):
        texts.append(value["text"])
    elif value.get("type") == "link" and isinstance(value.get("url"), str):
        texts.append(value["url"])
    for key in ("text", "fields", "elements"):
        if not isinstance(value.get(key), str):
            texts.extend(_block_texts(value.get(key)))
    return texts


def _dicts(value: object) -> list[dict[str, Any]]:
    """The objects in a list field; nothing for any other shape (intake reads posts before the
    ack, so an odd payload must not raise)."""
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def _add(lines: dict[str, None], value: object) -> None:
    text = _plain(value)
    for line in text.splitlines():
        line = line.strip()
        if line:
            lines.setdefault(line)


def _plain(value: object) -> str:
    """Slack markup to plain words: links to their labels, mentions dropped, entities decoded."""
    if not isinstance(value, str):
        return ""
    text = _LINK.sub(lambda m: m.group(2) or m.group(1), value)
    text = _SPECIAL.sub("", text)
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&").strip()
