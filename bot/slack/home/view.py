"""The App Home view of a tenant's settings, drawn with slack_sdk's Block Kit models (which
validate Slack's limits): every member reads it; an admin's copy carries the controls.

A home view holds at most 100 blocks: the channels, the longest list, get what the other
sections leave, and a note says how many more there are.
"""

from __future__ import annotations

import re
from datetime import datetime

from slack_sdk.models.blocks import (
    ActionsBlock,
    Block,
    ButtonElement,
    CheckboxesElement,
    ConfirmObject,
    ContextBlock,
    ConversationSelectElement,
    DividerBlock,
    HeaderBlock,
    InteractiveElement,
    Option,
    SectionBlock,
    StaticSelectElement,
    UserMultiSelectElement,
    UserSelectElement,
)
from slack_sdk.models.views import View

from bot.core.admin.audit import describe_change
from bot.core.admin.overview import ChannelRow, SourceLine, TenantOverview
from bot.slack.blocks.text import clip, escape_mrkdwn, mrkdwn, one_line
from bot.slack.home import ids

MAX_BLOCKS = 100
_ID = re.compile(r"[UWSCG][A-Z0-9_]{2,30}")
SECTION_MAX = 2900
MAX_ADMIN_ROWS = 10


def render_home(
    overview: TenantOverview,
    *,
    team_id: str,
    admin: bool,
    notice: str | None = None,
    usergroups: list[tuple[str, str]] | None = None,
) -> View:
    """The home view for one reader; ``notice`` (already safe mrkdwn) says what their last
    action did or why it changed nothing."""
    top = _top(overview, admin, notice)
    rest = [
        *_sources(overview.sources, admin),
        *_owners(overview.default_owner, admin, usergroups or []),
        *_gaps(overview),
        *_admins(overview, admin, usergroups or []),
        *_changes(overview),
    ]
    room = MAX_BLOCKS - len(top) - len(rest) - 2
    blocks = [*top, *_channels(overview, admin, room), *rest]
    view = View(
        type="home",
        blocks=blocks[:MAX_BLOCKS],
        private_metadata=ids.ViewOrigin(overview.tenant, team_id).encode(),
    )
    view.validate_json()
    return view


def render_not_connected(team_id: str, *, uninstalled: bool = False) -> View:
    why = (
        "This workspace uninstalled runbook-bot; reinstall it to get its runbooks and "
        "settings back."
        if uninstalled
        else "This workspace is not connected to a runbook tenant yet. An operator connects it "
        "with `runbook workspace add " + escape_mrkdwn(team_id) + " TENANT`."
    )
    return View(
        type="home",
        blocks=[HeaderBlock(text="runbook-bot"), SectionBlock(text=mrkdwn(why))],
    )


def _top(overview: TenantOverview, admin: bool, notice: str | None) -> list[Block]:
    blocks: list[Block] = [HeaderBlock(text=clip(f"runbook-bot · {overview.tenant}", 150))]
    if notice:
        blocks.append(SectionBlock(text=mrkdwn(clip(notice, SECTION_MAX))))
    who = (
        "You can change these settings; every change is recorded below."
        if admin
        else "Read only: only this workspace's admins can change these settings."
    )
    blocks.append(ContextBlock(elements=[mrkdwn(who)]))
    return blocks


def _sources(sources: list[SourceLine], admin: bool) -> list[Block]:
    blocks: list[Block] = [DividerBlock(), HeaderBlock(text="Runbook sources")]
    if not sources:
        blocks.append(SectionBlock(text=mrkdwn("No runbook sources yet.")))
    for source in sources:
        blocks.append(SectionBlock(text=mrkdwn(clip(_source_text(source), SECTION_MAX))))
        if admin:
            blocks.append(
                ActionsBlock(
                    block_id=f"src:{source.source_id}",
                    elements=[
                        ButtonElement(
                            text="Sync now", action_id=ids.SOURCE_SYNC, value=source.source_id
                        ),
                        ButtonElement(
                            text="Remove",
                            action_id=ids.SOURCE_REMOVE,
                            value=source.source_id,
                            style="danger",
                            confirm=ConfirmObject(
                                title="Remove this source?",
                                text=clip(
                                    f"{source.name} stops syncing. Its runbooks stay searchable.",
                                    300,
                                ),
                                confirm="Remove",
                                deny="Keep it",
                            ),
                        ),
                    ],
                )
            )
    if admin:
        blocks.append(
            ActionsBlock(
                block_id="sources.add",
                elements=[
                    ButtonElement(
                        text="Add a git repository", action_id=ids.SOURCE_ADD_GIT, value="git"
                    ),
                    ButtonElement(
                        text="Add a Confluence space",
                        action_id=ids.SOURCE_ADD_CONFLUENCE,
                        value="confluence",
                    ),
                ],
            )
        )
    return blocks


def _source_text(source: SourceLine) -> str:
    where = escape_mrkdwn(one_line(source.where))
    scope = f" ({escape_mrkdwn(one_line(source.scope))})" if source.scope else ""
    lines = [f"*{escape_mrkdwn(source.name)}* · {source.kind} · `{where}`{scope}"]
    if source.last_sync is None:
        lines.append(f"Never synced · next sync {_when(source.next_sync)}")
    else:
        outcome = "synced" if source.outcome == "synced" else "*FAILED*"
        lines.append(
            f"Last sync {_when(source.last_sync)}: {outcome} · {source.skipped} skipped files · "
            f"next sync {_when(source.next_sync)}"
        )
    if source.outcome == "failed" and source.error:
        lines.append(f"> {escape_mrkdwn(one_line(source.error))[:400]}")
    return "\n".join(lines)


def _channels(overview: TenantOverview, admin: bool, room: int) -> list[Block]:
    blocks: list[Block] = [DividerBlock(), HeaderBlock(text="Channels")]
    channels = overview.channels
    if not channels:
        text = "The bot is in no channels yet: `/invite @runbook-bot` in an incident channel."
        return [*blocks, SectionBlock(text=mrkdwn(text))]
    if not admin:
        lines = [_channel_line(c) for c in channels]
        return [*blocks, *_sections(lines)]
    shown = channels[: max(room - len(blocks), 1)]
    for channel in shown:
        blocks.append(_channel_controls(channel, overview.services))
    if len(shown) < len(channels):
        more = f"…and {len(channels) - len(shown)} more channels (`runbook channel …` sets them)."
        blocks.append(ContextBlock(elements=[mrkdwn(more)]))
    return blocks


def _channel_line(channel: ChannelRow) -> str:
    return (
        f"#{escape_mrkdwn(channel.name)} — alert answers {_on(channel.alerts)} · follow-ups "
        f"{_on(channel.follow_ups)} · {escape_mrkdwn(channel.service or 'every service')}"
    )


def _channel_controls(channel: ChannelRow, services: list[str]) -> ActionsBlock:
    name = clip(f"#{one_line(channel.name)}", 40)
    options = [
        Option(text=f"{name}: answer alert posts", value="alerts"),
        Option(text=f"{name}: answer thread follow-ups", value="follow_ups"),
    ]
    chosen = [o for o in options if getattr(channel, o.value or "")]
    elements: list[InteractiveElement] = [
        CheckboxesElement(
            action_id=ids.CHANNEL_SWITCHES,
            options=options,
            initial_options=chosen or None,
        )
    ]
    if services:
        choices = [Option(text=f"{name}: every service", value=ids.ANY_SERVICE)] + [
            Option(text=clip(f"{name}: {one_line(s)}", 75), value=s[:150]) for s in services[:99]
        ]
        current = next((o for o in choices if o.value == channel.service), choices[0])
        elements.append(
            StaticSelectElement(
                action_id=ids.CHANNEL_SERVICE,
                placeholder=f"{name}: preferred service",
                options=choices,
                initial_option=current,
            )
        )
    return ActionsBlock(block_id=f"{ids.CHANNEL_BLOCK}{channel.channel_id}", elements=elements)


def _owners(owner: str | None, admin: bool, groups: list[tuple[str, str]]) -> list[Block]:
    text = "*Default owner* (gets 👎 notes and source-failure reports): " + (
        _target(owner) if owner else "none yet"
    )
    blocks: list[Block] = [
        DividerBlock(),
        HeaderBlock(text="Owners"),
        SectionBlock(text=mrkdwn(text)),
    ]
    if not admin:
        return blocks
    person = owner if owner and owner[:1] in "UW" else None
    channel = owner if owner and owner[:1] in "CG" else None
    elements: list[InteractiveElement] = [
        UserSelectElement(action_id=ids.OWNER_USER, placeholder="A person", initial_user=person),
        ConversationSelectElement(
            action_id=ids.OWNER_CHANNEL, placeholder="A channel", initial_conversation=channel
        ),
    ]
    if groups:
        options = [Option(text=clip(f"@{one_line(n)}", 75), value=g) for g, n in groups[:100]]
        current = next((o for o in options if o.value == owner), None)
        elements.append(
            StaticSelectElement(
                action_id=ids.OWNER_GROUP,
                placeholder="A user group",
                options=options,
                initial_option=current,
            )
        )
    if owner:
        elements.append(
            ButtonElement(text="No default owner", action_id=ids.OWNER_CLEAR, value="clear")
        )
    blocks.append(ActionsBlock(block_id="owners", elements=elements))
    return blocks


def _gaps(overview: TenantOverview) -> list[Block]:
    blocks: list[Block] = [DividerBlock(), HeaderBlock(text="Gaps (last 30 days)")]
    if not overview.gaps:
        return [*blocks, SectionBlock(text=mrkdwn("No open gaps: every question found a runbook."))]
    for gap in overview.gaps:
        text = (
            f"*{escape_mrkdwn(one_line(gap.label))[:200]}* — {gap.count} questions · owner "
            f"{escape_mrkdwn(one_line(gap.owner))}"
        )
        draft = (
            ButtonElement(text="Draft", action_id=ids.GAP_DRAFT, value=gap.gap_id)
            if gap.has_draft
            else None
        )
        blocks.append(SectionBlock(text=mrkdwn(clip(text, SECTION_MAX)), accessory=draft))
    return blocks


def _admins(overview: TenantOverview, admin: bool, groups: list[tuple[str, str]]) -> list[Block]:
    added = overview.admins
    names = ", ".join(_target(a.principal) for a in added) or "nobody else yet"
    text = f"The workspace's admins and owners, plus: {names}"
    blocks: list[Block] = [DividerBlock(), HeaderBlock(text="Admins")]
    blocks.append(SectionBlock(text=mrkdwn(clip(text, SECTION_MAX))))
    if not admin:
        return blocks
    for entry in added[:MAX_ADMIN_ROWS]:
        blocks.append(
            SectionBlock(
                text=mrkdwn(f"{_target(entry.principal)} (added by {_target(entry.added_by)})"),
                accessory=ButtonElement(
                    text="Remove", action_id=ids.ADMIN_REMOVE, value=entry.principal
                ),
            )
        )
    elements: list[InteractiveElement] = [
        UserMultiSelectElement(action_id=ids.ADMIN_ADD_USERS, placeholder="Add admins")
    ]
    if groups:
        options = [Option(text=clip(f"@{one_line(n)}", 75), value=g) for g, n in groups[:100]]
        elements.append(
            StaticSelectElement(
                action_id=ids.ADMIN_ADD_GROUP, placeholder="Add a user group", options=options
            )
        )
    blocks.append(ActionsBlock(block_id="admins.add", elements=elements))
    return blocks


def _changes(overview: TenantOverview) -> list[Block]:
    blocks: list[Block] = [DividerBlock(), HeaderBlock(text="Recent changes")]
    if not overview.changes:
        return [*blocks, ContextBlock(elements=[mrkdwn("No changes yet.")])]
    lines = [
        f"{_when(e.at)} · {_target(e.actor) if e.actor[:1] in 'UW' else escape_mrkdwn(e.actor)}"
        f" · {escape_mrkdwn(one_line(describe_change(e)))[:300]}"
        for e in overview.changes
    ]
    return [*blocks, *_sections(lines)]


def _sections(lines: list[str]) -> list[Block]:
    out: list[Block] = []
    chunk: list[str] = []
    for line in lines:
        if sum(len(x) + 1 for x in chunk) + len(line) > SECTION_MAX:
            out.append(SectionBlock(text=mrkdwn("\n".join(chunk))))
            chunk = []
        chunk.append(line)
    if chunk:
        out.append(SectionBlock(text=mrkdwn("\n".join(chunk))))
    return out


def _target(target: str) -> str:
    """A person, group or channel id as Slack draws it (a home view notifies nobody)."""
    if _ID.fullmatch(target):
        kind = target[0]
        if kind in "UW":
            return f"<@{target}>"
        return f"<!subteam^{target}>" if kind == "S" else f"<#{target}>"
    return escape_mrkdwn(one_line(target))


def _on(value: bool) -> str:
    return "on" if value else "off"


def _when(at: datetime) -> str:
    return at.strftime("%Y-%m-%d %H:%M UTC")
