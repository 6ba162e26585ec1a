"""A structural validator for Adaptive Cards 1.5 as Teams renders them, and for whole outgoing
activities (size, mention entities, literal ``<at>`` tags).

No schema package is installable offline, so this encodes the 1.5 schema's element and action
types, their required and allowed properties, and the cross-references a schema cannot check
(unique ids, toggle targets that exist).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

MAX_ACTIVITY_BYTES = 28_000
AT_TAG = re.compile(r"(?i)</?at(?:\s[^>]*)?>")

_ELEMENT = {"type", "id", "isVisible", "separator", "spacing", "height", "requires", "fallback"}
_ACTION = {"type", "title", "id", "iconUrl", "style", "fallback", "tooltip", "isEnabled", "mode"}
_TEXT_STYLE = {"size", "weight", "color", "isSubtle", "fontType"}
ELEMENTS: dict[str, tuple[set[str], set[str]]] = {  # type: (required, allowed beyond common)
    "TextBlock": (
        {"text"},
        {"text", "wrap", "horizontalAlignment", "maxLines", "style"} | _TEXT_STYLE,
    ),
    "RichTextBlock": ({"inlines"}, {"inlines", "horizontalAlignment"}),
    "Container": (
        {"items"},
        {"items", "style", "selectAction", "verticalContentAlignment", "bleed", "minHeight"},
    ),
    "ActionSet": ({"actions"}, {"actions"}),
    "FactSet": ({"facts"}, {"facts"}),
    "ColumnSet": (set(), {"columns", "style", "selectAction", "bleed", "minHeight"}),
    "Image": ({"url"}, {"url", "altText", "size", "style", "width", "horizontalAlignment"}),
    "Input.Text": (
        {"id"},
        {
            "label",
            "isMultiline",
            "isRequired",
            "errorMessage",
            "maxLength",
            "value",
            "placeholder",
            "style",
            "regex",
            "inlineAction",
        },
    ),
    "Input.ChoiceSet": (
        {"id", "choices"},
        {
            "choices",
            "label",
            "style",
            "isMultiSelect",
            "isRequired",
            "errorMessage",
            "value",
            "placeholder",
            "wrap",
        },
    ),
}
TEXT_RUN = {"type", "text", "italic", "strikethrough", "highlight", "underline", "selectAction"}
ACTIONS: dict[str, tuple[set[str], set[str]]] = {
    "Action.Execute": ({"verb"}, {"verb", "data", "associatedInputs"}),
    "Action.Submit": (set(), {"data", "associatedInputs"}),
    "Action.OpenUrl": ({"url"}, {"url"}),
    "Action.ToggleVisibility": ({"targetElements"}, {"targetElements"}),
    "Action.ShowCard": ({"card"}, {"card"}),
}
CARD = {
    "type",
    "version",
    "body",
    "actions",
    "msteams",
    "$schema",
    "fallbackText",
    "speak",
    "lang",
    "minHeight",
    "verticalContentAlignment",
    "selectAction",
    "rtl",
}


def card_problems(card: Any) -> list[str]:
    """Every way ``card`` is not a valid Adaptive Card 1.5 for Teams (empty when valid)."""
    if not isinstance(card, dict) or card.get("type") != "AdaptiveCard":
        return [f"root is not an AdaptiveCard: {str(card)[:80]}"]
    problems = [f"card property {k!r} is not in the 1.5 schema" for k in set(card) - CARD]
    if card.get("version") != "1.5":
        problems.append(f"version {card.get('version')!r}, expected '1.5'")
    ids: list[str] = []
    toggles: list[str] = []
    for element in _list(card.get("body"), problems, "body"):
        problems += _element(element, ids, toggles)
    for action in _list(card.get("actions", []), problems, "actions"):
        problems += _action(action, ids, toggles)
    problems += [f"element id {i!r} is used twice" for i in set(ids) if ids.count(i) > 1]
    problems += [f"toggle target {t!r} does not exist" for t in toggles if t not in ids]
    return problems


def activity_problems(activity: dict[str, Any], size: int) -> list[str]:
    """A posted activity: within the size limit, Adaptive Cards only, no mention anywhere."""
    problems = [] if size <= MAX_ACTIVITY_BYTES else [f"activity is {size} bytes"]
    if any(e.get("type") == "mention" for e in _dicts(activity)):
        problems.append("a mention entity")
    for text in rendered_texts(activity):
        if AT_TAG.search(text):
            problems.append(f"literal <at> tag in {text[:60]!r}")
    for attachment in activity.get("attachments") or []:
        if attachment.get("contentType") != "application/vnd.microsoft.card.adaptive":
            problems.append(f"attachment {attachment.get('contentType')!r}")
        else:
            problems += card_problems(attachment.get("content"))
    return problems


def rendered_texts(value: Any) -> list[str]:
    """Every string Teams may show: text, titles, labels, fact values (not action data)."""
    found = []
    for node in _dicts(value, skip=("data",)):
        for key in ("text", "title", "label", "placeholder", "summary", "value", "errorMessage"):
            if isinstance(node.get(key), str):
                found.append(node[key])
    return found


def card_of(activity: dict[str, Any]) -> dict[str, Any]:
    [attachment] = activity["attachments"]
    content = attachment["content"]
    return content if isinstance(content, dict) else json.loads(content)


def _element(element: Any, ids: list[str], toggles: list[str]) -> list[str]:
    if not isinstance(element, dict):
        return [f"element is not an object: {element!r:.60}"]
    kind = element.get("type")
    if kind not in ELEMENTS:
        return [f"element type {kind!r} is not an Adaptive Cards 1.5 element Teams renders"]
    required, allowed = ELEMENTS[kind]
    problems = [f"{kind} lacks {name!r}" for name in required - set(element)]
    problems += [f"{kind} has unknown property {k!r}" for k in set(element) - allowed - _ELEMENT]
    if isinstance(element.get("id"), str):
        ids.append(element["id"])
    if kind == "Input.ChoiceSet":
        for choice in _list(element.get("choices"), problems, "choices"):
            if not isinstance(choice, dict) or set(choice) != {"title", "value"}:
                problems.append(f"Input.ChoiceSet choice is not a title and value: {choice!r:.60}")
    if kind == "TextBlock" and not isinstance(element.get("text"), str):
        problems.append("TextBlock text is not a string")
    if kind == "RichTextBlock":
        for inline in _list(element.get("inlines"), problems, "inlines"):
            if not isinstance(inline, str):
                problems += _text_run(inline, ids, toggles)
    children = {"Container": "items", "ActionSet": "actions"}
    if kind == "Container":
        for child in _list(element.get("items"), problems, "items"):
            problems += _element(child, ids, toggles)
    elif kind == "ActionSet":
        for action in _list(element.get(children[kind]), problems, "actions"):
            problems += _action(action, ids, toggles)
    return problems


def _text_run(run: Any, ids: list[str], toggles: list[str]) -> list[str]:
    if not isinstance(run, dict) or run.get("type") != "TextRun":
        return [f"RichTextBlock inline is not a TextRun: {run!r:.60}"]
    problems = [f"TextRun has unknown property {k!r}" for k in set(run) - TEXT_RUN - _TEXT_STYLE]
    if not isinstance(run.get("text"), str):
        problems.append("TextRun text is not a string")
    if "selectAction" in run:
        problems += _action(run["selectAction"], ids, toggles)
    return problems


def _action(action: Any, ids: list[str], toggles: list[str]) -> list[str]:
    if not isinstance(action, dict) or action.get("type") not in ACTIONS:
        return [f"not an Adaptive Cards 1.5 action: {action!r:.60}"]
    kind = action["type"]
    required, allowed = ACTIONS[kind]
    problems = [f"{kind} lacks {name!r}" for name in required - set(action)]
    problems += [f"{kind} has unknown property {k!r}" for k in set(action) - allowed - _ACTION]
    if kind == "Action.Execute" and not str(action.get("verb") or "").strip():
        problems.append("Action.Execute without a verb")
    if kind == "Action.ToggleVisibility":
        targets = action.get("targetElements")
        if not isinstance(targets, list) or not targets:
            problems.append("Action.ToggleVisibility without targetElements")
        else:
            toggles += [t if isinstance(t, str) else str(t.get("elementId")) for t in targets]
    if isinstance(action.get("fallback"), dict):
        problems += _action(action["fallback"], ids, toggles)
    return problems


def _list(value: Any, problems: list[str], name: str) -> list[Any]:
    if not isinstance(value, list):
        problems.append(f"{name} is not a list")
        return []
    return value


def _dicts(value: Any, skip: tuple[str, ...] = ()) -> Iterator[dict[str, Any]]:
    if isinstance(value, dict):
        yield value
        for key, item in value.items():
            if key not in skip:
                yield from _dicts(item, skip)
    elif isinstance(value, list):
        for item in value:
            yield from _dicts(item, skip)
