"""Reading a Teams post, for the "Ask runbooks" action and for alert posts that reach the bot
unprompted: its words and its scope hints.

Alert posts from Alertmanager, Azure Monitor, PagerDuty and Grafana carry most of their text in
card attachments (Adaptive Cards or Office 365 connector cards, the content sometimes a JSON
string) and an HTML body. Both are read; service labels and alert names become scope hints.
"""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from typing import Any

from microsoft_agents.activity import Activity

from bot.core.alerts.classifier import AlertText

# service=kafka, service: "kafka", app=checkout, alertname=KubePodCrashLooping
_LABEL = re.compile(
    r"\b(service|app|alertname)[*_`]*\s*[=:][\s*_`\"']*([A-Za-z0-9][\w.-]*)", re.IGNORECASE
)
_FIRING = re.compile(r"\[(?:FIRING|RESOLVED)(?::\d+)?\]\s*([A-Za-z][\w.-]*)")
_SERVICE_FACTS = frozenset(
    {"service", "services", "impacted service", "component", "app", "affected service"}
)
_ALERT_FACTS = frozenset({"alertname", "alert name", "alert rule", "rule", "monitor"})
# Card parts that are not words of the alert: buttons, images, inputs.
_SKIPPED = frozenset({"actions", "selectAction", "images", "url", "iconUrl", "backgroundImage"})
_BLOCK_TAGS = frozenset({"p", "div", "br", "li", "tr", "h1", "h2", "h3", "h4", "pre", "ul", "ol"})


def read_message_payload(payload: object) -> AlertText:
    """The words and hints of a message action's ``messagePayload``."""
    if not isinstance(payload, dict):
        return AlertText("", ())
    lines: list[str] = []
    services: list[str] = []
    alerts: list[str] = []
    body = payload.get("body")
    if isinstance(body, dict) and isinstance(body.get("content"), str):
        content = body["content"]
        _add_plain(lines, html_to_text(content) if body.get("contentType") == "html" else content)
    for item in payload.get("attachments") or []:
        if isinstance(item, dict):
            _read_card(_content(item.get("content")), lines, services, alerts)
    text = "\n".join(lines)
    return AlertText(text, _hints(text, services, alerts))


def read_activity(activity: Activity) -> AlertText:
    """The words and hints of a channel message as the bot receives it: its text (plain, or HTML
    from clients and apps) and its attachments (cards, the client's ``text/html`` rendering)."""
    text_format = (activity.text_format or "").lower()
    body = {
        "contentType": "html" if text_format == "xml" else "text",
        "content": activity.text or "",
    }
    attachments = [
        {"content": attachment.content}
        for attachment in activity.attachments or []
        if attachment.content is not None
    ]
    return read_message_payload({"body": body, "attachments": attachments})


def html_to_text(html: str) -> str:
    """Teams message HTML to plain lines; mentions and attachment placeholders dropped."""
    reader = _HtmlText()
    reader.feed(html)
    reader.close()
    return reader.text()


class _HtmlText(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self._parts: list[str] = []
        self._skip = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("at", "attachment", "script", "style"):
            self._skip += 1
        elif tag in _BLOCK_TAGS:
            self._parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in ("at", "attachment", "script", "style"):
            self._skip = max(0, self._skip - 1)
        elif tag in _BLOCK_TAGS:
            self._parts.append("\n")

    def handle_data(self, data: str) -> None:
        if not self._skip:
            self._parts.append(data)

    def text(self) -> str:
        lines = (" ".join(line.split()) for line in "".join(self._parts).splitlines())
        return "\n".join(line for line in lines if line)


def _content(content: object) -> object:
    """Attachment content: an object, or a JSON string of one (Teams sends both)."""
    if isinstance(content, str):
        try:
            return json.loads(content)
        except ValueError:
            return html_to_text(content)
    return content


def _read_card(
    card: object, lines: list[str], services: list[str], alerts: list[str], depth: int = 0
) -> None:
    """Every text of an Adaptive, connector (MessageCard) or hero card, facts as "name: value"."""
    if depth > 20:
        return
    if isinstance(card, str):
        _add(lines, card)
        return
    if isinstance(card, list):
        for item in card:
            _read_card(item, lines, services, alerts, depth + 1)
        return
    if not isinstance(card, dict) or str(card.get("type", "")).startswith(("Action.", "Input.")):
        return
    for key in ("title", "activityTitle", "activitySubtitle", "subtitle", "text", "activityText"):
        if isinstance(card.get(key), str):
            _add(lines, card[key])
    for fact in card.get("facts") or []:
        if isinstance(fact, dict):
            name = _plain(fact.get("title") or fact.get("name"))
            value = _plain(fact.get("value"))
            if name.lower() in _SERVICE_FACTS and value:
                services.append(value)
            if name.lower() in _ALERT_FACTS and value:
                alerts.append(value)
            _add(lines, f"{name}: {value}" if name and value else name or value)
    for key, value in card.items():
        if key not in _SKIPPED and isinstance(value, list | dict) and key != "facts":
            _read_card(value, lines, services, alerts, depth + 1)


def _hints(text: str, services: list[str], alerts: list[str]) -> tuple[str, ...]:
    labels = [(key.lower(), value) for key, value in _LABEL.findall(text)]
    ordered = [
        *services,
        *(value for key, value in labels if key == "service"),
        *(value for key, value in labels if key == "app"),
        *(value for key, value in labels if key == "alertname"),
        *alerts,
        *_FIRING.findall(text),
    ]
    return tuple(dict.fromkeys(ordered))


def _add(lines: list[str], value: object) -> None:
    _add_plain(lines, _plain(value))


def _add_plain(lines: list[str], text: str) -> None:
    for line in text.splitlines():
        line = " ".join(line.split())
        if line and line not in lines:
            lines.append(line)


def _plain(value: Any) -> str:
    if not isinstance(value, str):
        return ""
    # Markup inside card text (MessageCards allow some HTML; mentions may be inlined).
    return html_to_text(value) if "<" in value else value.strip()
