"""The Add a source modal: git (URL, branch, path, token or deploy key) or Confluence (site,
space, label, e-mail and API token, or a personal access token), its submitted values read
into a ``SourceDraft``, and the outcome views. Credentials are typed once: no view ever shows
them again (they are never an ``initial_value``)."""

from __future__ import annotations

from typing import Any

from slack_sdk.models.blocks import (
    Block,
    HeaderBlock,
    InputBlock,
    PlainTextInputElement,
    SectionBlock,
)
from slack_sdk.models.views import View

from bot.core.admin.source_form import SourceDraft
from bot.slack.blocks.text import clip, escape_mrkdwn, mrkdwn
from bot.slack.home import ids

_GIT_FIELDS = (
    ("url", "Repository URL", "https://github.com/acme/runbooks.git", False, False),
    ("branch", "Branch", "the repository's default branch", True, False),
    ("path", "Folder", "only runbooks under this folder, e.g. runbooks", True, False),
    ("token", "Access token", "read-only token for an https URL (sealed at once)", True, False),
    ("ssh_key", "Deploy key", "private key for an ssh URL (sealed at once)", True, True),
    ("name", "Name", "shown on the page; default from the URL", True, False),
)
_CONFLUENCE_FIELDS = (
    ("url", "Site", "https://acme.atlassian.net/wiki", False, False),
    ("space", "Space key", "OPS", False, False),
    ("label", "Label", "only pages with this label", True, False),
    ("email", "E-mail (Cloud)", "the account of the API token", True, False),
    ("token", "API token (Cloud)", "sealed at once", True, False),
    ("pat", "Personal access token (Data Center)", "sealed at once", True, False),
    ("name", "Name", "shown on the page; default from the space", True, False),
)
_SECRETS = {"token", "ssh_key", "pat"}


def add_source_modal(
    kind: str, origin: ids.ViewOrigin, *, kept: dict[str, str] | None = None
) -> View:
    """The form for ``kind``; ``kept``: values to show again (never a credential)."""
    fields = _GIT_FIELDS if kind == "git" else _CONFLUENCE_FIELDS
    kept = kept or {}
    blocks: list[Block] = [
        SectionBlock(
            text=mrkdwn(
                "The source is tested before it is saved. Tokens and keys are sealed at once "
                "and never shown again."
            )
        )
    ]
    for field, label, hint, optional, multiline in fields:
        value = None if field in _SECRETS else kept.get(field) or None
        blocks.append(
            InputBlock(
                block_id=field,
                label=label,
                optional=optional,
                hint=hint,
                element=PlainTextInputElement(
                    action_id=field, multiline=multiline, initial_value=value
                ),
            )
        )
    title = "Add a git repository" if kind == "git" else "Add a Confluence space"
    return View(
        type="modal",
        callback_id=ids.ADD_SOURCE_CALLBACK,
        title=title[:24],
        submit="Test and add",
        close="Cancel",
        blocks=blocks,
        private_metadata=_metadata(origin, kind),
    )


def result_modal(title: str, text: str) -> View:
    return View(
        type="modal",
        title=title[:24],
        close="Close",
        blocks=[HeaderBlock(text=clip(title, 150)), SectionBlock(text=mrkdwn(clip(text, 2900)))],
    )


def testing_modal(url: str) -> View:
    return result_modal(
        "Testing the source",
        f"Reading `{escape_mrkdwn(url)[:300]}`… this window shows the outcome.",
    )


def draft_of(view: dict[str, Any]) -> tuple[SourceDraft, dict[str, str]]:
    """The submitted values, and the non-secret ones to show again after an error."""
    values = (view.get("state") or {}).get("values") or {}
    typed: dict[str, str] = {}
    for block_id, actions in values.items():
        if not isinstance(actions, dict):
            continue
        entry = actions.get(block_id)
        if isinstance(entry, dict) and isinstance(entry.get("value"), str):
            typed[str(block_id)] = entry["value"]
    _, kind = origin_of(view)
    draft = SourceDraft.model_validate({"kind": kind, **typed})
    return draft, {k: v for k, v in typed.items() if k not in _SECRETS}


def origin_of(view: dict[str, Any]) -> tuple[ids.ViewOrigin | None, str]:
    raw = str(view.get("private_metadata") or "")
    head, _, kind = raw.rpartition("|")
    return ids.ViewOrigin.decode(head), "confluence" if kind == "confluence" else "git"


def field_errors(errors: dict[str, str], view: dict[str, Any]) -> dict[str, str]:
    """Errors keyed by the modal's block ids (an error for a field the form lacks goes to url)."""
    present = {str(b.get("block_id")) for b in view.get("blocks") or [] if isinstance(b, dict)}
    out: dict[str, str] = {}
    for field, message in errors.items():
        key = field if field in present else "url"
        out[key] = clip(f"{out[key]}; {message}" if key in out else message, 150)
    return out


def _metadata(origin: ids.ViewOrigin, kind: str) -> str:
    return f"{origin.encode()}|{kind}"
