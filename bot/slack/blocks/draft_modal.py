"""The review modal: the draft's title, text, owner and destination (a new runbook, or a new
section of the nearest existing runbook, named with its title), and reading it back."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

SUBMIT_CALLBACK = "draft_runbook_submit"
TEXT_LIMIT = 3000  # Slack's plain_text_input maximum
_TITLE, _TEXT, _OWNER, _WHERE = "draft_title", "draft_text", "draft_owner", "draft_destination"


@dataclass(frozen=True)
class Nearest:
    document_id: str
    title: str


@dataclass(frozen=True)
class Reviewed:
    tenant: str
    draft_id: str
    title: str
    text: str | None  # None: the text was too long for the modal and stays as drafted
    owner: str | None
    destination: str


def draft_modal(
    *,
    tenant: str,
    draft_id: str,
    title: str,
    body: str,
    owner: str,
    summary: str,
    nearest: Nearest | None,
) -> dict[str, Any]:
    new = _option(f"A new runbook: {title}", "new")
    options = [new]
    if nearest is not None:
        options.append(
            _option(f"A new section of: {nearest.title}", f"append:{nearest.document_id}")
        )
    blocks: list[dict[str, Any]] = [
        {"type": "section", "text": {"type": "mrkdwn", "text": summary}},
        _input(
            _TITLE,
            "Title",
            {"type": "plain_text_input", "initial_value": title[:150], "max_length": 150},
        ),
    ]
    if len(body) <= TEXT_LIMIT:
        element = {
            "type": "plain_text_input",
            "multiline": True,
            "initial_value": body,
            "max_length": TEXT_LIMIT,
        }
        blocks.append(_input(_TEXT, "Runbook text (Markdown)", element))
    else:
        blocks.append(
            {
                "type": "section",
                "text": {
                    "type": "mrkdwn",
                    "text": "The draft is longer than a Slack text box holds: it goes out as "
                    "drafted, and you can edit it in the pull request.",
                },
            }
        )
    blocks.append(_input(_OWNER, "Owner", {"type": "users_select", "initial_user": owner}))
    blocks.append(
        _input(
            _WHERE,
            "Where it goes",
            {"type": "static_select", "options": options, "initial_option": new},
        )
    )
    return {
        "type": "modal",
        "callback_id": SUBMIT_CALLBACK,
        "title": {"type": "plain_text", "text": "Draft a runbook"},
        "submit": {"type": "plain_text", "text": "Open pull request"},
        "close": {"type": "plain_text", "text": "Cancel"},
        "private_metadata": json.dumps({"tenant": tenant, "draft": draft_id}),
        "blocks": blocks,
    }


def notice_modal(title: str, text: str) -> dict[str, Any]:
    """A modal that only says something (a refusal, an empty thread)."""
    return {
        "type": "modal",
        "title": {"type": "plain_text", "text": title[:24]},
        "close": {"type": "plain_text", "text": "Close"},
        "blocks": [{"type": "section", "text": {"type": "mrkdwn", "text": text}}],
    }


def read_review(view: dict[str, Any]) -> Reviewed:
    meta = json.loads(view.get("private_metadata") or "{}")
    values: dict[str, Any] = (view.get("state") or {}).get("values") or {}

    def value(block: str) -> dict[str, Any]:
        found = values.get(block) or {}
        return dict(found.get(block) or next(iter(found.values()), {}) or {})

    selected = value(_WHERE).get("selected_option") or {}
    text = value(_TEXT).get("value") if _TEXT in values else None
    return Reviewed(
        tenant=str(meta.get("tenant") or ""),
        draft_id=str(meta.get("draft") or ""),
        title=str(value(_TITLE).get("value") or "").strip(),
        text=None if text is None else str(text),
        owner=value(_OWNER).get("selected_user"),
        destination=str(selected.get("value") or "new"),
    )


def _input(block_id: str, label: str, element: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "input",
        "block_id": block_id,
        "label": {"type": "plain_text", "text": label},
        "element": {**element, "action_id": block_id},
    }


def _option(text: str, value: str) -> dict[str, Any]:
    return {"text": {"type": "plain_text", "text": text[:75]}, "value": value[:150]}
