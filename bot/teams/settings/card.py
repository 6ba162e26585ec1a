"""The settings card: the same overview as Slack's App Home, as an Adaptive Card. Every reader
sees it; an admin's copy carries ``Action.Execute`` controls whose verbs start ``settings.``.
Untrusted text (source names, URLs, gap questions) goes in TextRuns, shown as typed."""

from __future__ import annotations

from bot.core.admin.audit import describe_change
from bot.core.admin.overview import TenantOverview
from bot.teams.cards import Json
from bot.teams.cards.elements import adaptive_card, clip, execute, rich_text, run, text_block

VERB = "settings."
REFRESH = "settings.refresh"
CHANNEL = "settings.channel"
SOURCE_SYNC = "settings.source.sync"
SOURCE_REMOVE = "settings.source.remove"
SOURCE_ADD = "settings.source.add"
# The add-a-source inputs: form field → input id (secrets in password inputs, never prefilled).
SOURCE_INPUTS = {
    "kind": "source_kind",
    "url": "source_url",
    "branch": "source_branch",
    "path": "source_path",
    "space": "source_space",
    "label": "source_label",
    "email": "source_email",
    "token": "source_token",
    "pat": "source_pat",
    "name": "source_name",
}
_SOURCE_HINTS = {
    "url": "git clone URL (https://…) or Confluence site (https://acme.atlassian.net/wiki)",
    "branch": "git: branch (default: the repository's default)",
    "path": "git: only this folder",
    "space": "Confluence: space key, e.g. OPS",
    "label": "Confluence: only pages with this label",
    "email": "Confluence Cloud: e-mail of the API token",
    "token": "git token or Confluence API token (sealed at once)",
    "pat": "Confluence Data Center: personal access token (sealed at once)",
    "name": "name on the card (default from the URL or space)",
}
OWNER = "settings.owner"
ADMIN_ADD = "settings.admin.add"
ADMIN_REMOVE = "settings.admin.remove"
OWNER_INPUT = "owner_target"
ADMIN_INPUT = "admin_id"
MAX_CHANNELS = 25


def render_settings(overview: TenantOverview, *, admin: bool, notice: str | None = None) -> Json:
    body: list[Json] = [text_block(f"**runbook-bot settings · {overview.tenant}**", size="Medium")]
    if notice:
        body.append(rich_text(run(notice, weight="Bolder")))
    body.append(
        text_block(
            "You can change these settings; every change is recorded."
            if admin
            else "Read only: only this organisation's runbook-bot admins can change settings.",
            isSubtle=True,
        )
    )
    body += _sources(overview, admin)
    body += _channels(overview, admin)
    body += _owner(overview, admin)
    body += _gaps(overview)
    body += _admins(overview, admin)
    body += _changes(overview)
    return adaptive_card(body, [execute(REFRESH, "Refresh", {})])


def _heading(text: str) -> Json:
    return text_block(f"**{text}**", separator=True, spacing="Medium")


def _sources(overview: TenantOverview, admin: bool) -> list[Json]:
    out = [_heading("Runbook sources")]
    if not overview.sources:
        out.append(text_block("No runbook sources yet."))
    for s in overview.sources:
        last = s.last_sync.strftime("%Y-%m-%d %H:%M UTC") if s.last_sync else "never"
        line = f"{s.name} · {s.kind} · {s.where} ({s.scope}) · last sync {last}: {s.outcome}"
        out.append(rich_text(run(clip(f"{line} · {s.skipped} skipped", 500))))
        if admin:
            data = {"source_id": s.source_id}
            out.append(
                {
                    "type": "ActionSet",
                    "actions": [
                        execute(SOURCE_SYNC, "Sync now", data),
                        execute(SOURCE_REMOVE, "Remove", data),
                    ],
                }
            )
    if admin:
        out += _add_source()
    return out


def _add_source() -> list[Json]:
    kinds = [
        {"title": "git repository", "value": "git"},
        {"title": "Confluence space", "value": "confluence"},
    ]
    out: list[Json] = [
        text_block("Add a source (tested before it is saved):", spacing="Medium"),
        {"type": "Input.ChoiceSet", "id": SOURCE_INPUTS["kind"], "choices": kinds, "value": "git"},
    ]
    for field, hint in _SOURCE_HINTS.items():
        element: Json = {"type": "Input.Text", "id": SOURCE_INPUTS[field], "placeholder": hint}
        if field in ("token", "pat"):
            element["style"] = "Password"
        out.append(element)
    out.append({"type": "ActionSet", "actions": [execute(SOURCE_ADD, "Test and add", {})]})
    return out


def _channels(overview: TenantOverview, admin: bool) -> list[Json]:
    out = [_heading("Channels")]
    if not overview.channels:
        out.append(text_block("No channel has settings yet."))
    for c in overview.channels[:MAX_CHANNELS]:
        state = (
            f"{c.name}: alert answers {'on' if c.alerts else 'off'}, follow-ups "
            f"{'on' if c.follow_ups else 'off'}, {c.service or 'every service'}"
        )
        out.append(rich_text(run(clip(state, 300))))
        if admin:
            flip = {"channel_id": c.channel_id}
            out.append(
                {
                    "type": "ActionSet",
                    "actions": [
                        execute(
                            CHANNEL,
                            f"Alert answers {'off' if c.alerts else 'on'}",
                            {**flip, "switch": "alerts", "on": not c.alerts},
                        ),
                        execute(
                            CHANNEL,
                            f"Follow-ups {'off' if c.follow_ups else 'on'}",
                            {**flip, "switch": "follow_ups", "on": not c.follow_ups},
                        ),
                    ],
                }
            )
    return out


def _owner(overview: TenantOverview, admin: bool) -> list[Json]:
    owner = overview.default_owner or "none yet"
    out = [_heading("Owners"), rich_text(run(f"Default owner: {owner}"))]
    if admin:
        out.append(
            {
                "type": "Input.Text",
                "id": OWNER_INPUT,
                "placeholder": "A Teams channel id (19:…@thread.tacv2); empty for none",
            }
        )
        out.append({"type": "ActionSet", "actions": [execute(OWNER, "Set default owner", {})]})
    return out


def _gaps(overview: TenantOverview) -> list[Json]:
    out = [_heading("Gaps (last 30 days)")]
    if not overview.gaps:
        out.append(text_block("No open gaps."))
    for g in overview.gaps:
        draft = " · draft ready (`runbook gaps --draft`)" if g.has_draft else ""
        out.append(rich_text(run(clip(f"{g.label} — {g.count} questions · {g.owner}{draft}", 400))))
    return out


def _admins(overview: TenantOverview, admin: bool) -> list[Json]:
    out = [_heading("Admins")]
    if not overview.admins:
        out.append(text_block("Nobody yet."))
    for a in overview.admins:
        out.append(rich_text(run(f"{a.principal} (added by {a.added_by})")))
        if admin:
            out.append(
                {
                    "type": "ActionSet",
                    "actions": [execute(ADMIN_REMOVE, "Remove", {"principal": a.principal})],
                }
            )
    if admin:
        out.append(
            {"type": "Input.Text", "id": ADMIN_INPUT, "placeholder": "Entra object id of a person"}
        )
        out.append({"type": "ActionSet", "actions": [execute(ADMIN_ADD, "Add admin", {})]})
    return out


def _changes(overview: TenantOverview) -> list[Json]:
    out = [_heading("Recent changes")]
    if not overview.changes:
        out.append(text_block("No changes yet."))
    for e in overview.changes:
        when = e.at.strftime("%Y-%m-%d %H:%M")
        out.append(rich_text(run(clip(f"{when} · {e.actor} · {describe_change(e)}", 300))))
    return out
