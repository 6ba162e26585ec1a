"""``/runbook sources``: the tenant's runbook sources and their last syncs (ephemeral)."""

from __future__ import annotations

from collections.abc import Sequence

from slack_sdk.models.blocks import ContextBlock, HeaderBlock, SectionBlock

from bot.core.sources.alerts import SourceFailure
from bot.core.sources.status import describe_source
from bot.slack.blocks.card import MAX_BLOCKS, Card, build_card
from bot.slack.blocks.text import clip, escape_mrkdwn, mrkdwn
from rag import SourceRow

# Per source: a header line and its sync lines; skipped and failed paths beyond these are counted.
MAX_LINES_PER_SOURCE = 8
SECTION_MAX_CHARS = 2_900  # Slack's section text limit is 3,000


def render_source_status(tenant: str, rows: Sequence[SourceRow]) -> Card:
    title = f"Runbook sources of {tenant}"
    if not rows:
        return build_card(
            escape_mrkdwn(f"{title}: none"),
            [
                HeaderBlock(text=clip(title, 150)),
                SectionBlock(
                    text=mrkdwn(
                        "No sources yet. An operator adds one with `runbook source add "
                        "TENANT git URL` or `… confluence BASE_URL --space KEY`."
                    )
                ),
            ],
        )
    blocks: list[HeaderBlock | SectionBlock | ContextBlock] = [HeaderBlock(text=clip(title, 150))]
    shown = rows[: MAX_BLOCKS - 2]
    for row in shown:
        lines = describe_source(row)
        head, rest = lines[0], lines[1 : MAX_LINES_PER_SOURCE + 1]
        more = len(lines) - 1 - len(rest)
        icon = ":warning:" if row.last_outcome == "failed" else ":white_check_mark:"
        if row.last_sync_at is None:
            icon = ":hourglass:"
        text = f"{icon} *{escape_mrkdwn(head)}*\n" + "\n".join(
            escape_mrkdwn(line.strip()) for line in rest
        )
        if more > 0:
            text += f"\n+{more} more"
        blocks.append(SectionBlock(text=mrkdwn(clip(text, SECTION_MAX_CHARS))))
    if len(rows) > len(shown):
        blocks.append(ContextBlock(elements=[mrkdwn(f"+{len(rows) - len(shown)} more sources")]))
    return build_card(escape_mrkdwn(f"{title}: {len(rows)}"), blocks)


def render_source_failure(failure: SourceFailure) -> Card:
    """To the tenant's default owner: a source whose last syncs all failed."""
    text = (
        f"Runbook source {failure.tenant}/{failure.source} failed its last "
        f"{failure.failures} syncs; its runbooks stay as they were until it syncs again."
    )
    blocks = [
        SectionBlock(text=mrkdwn(f":warning: {escape_mrkdwn(text)}")),
        SectionBlock(text=mrkdwn(clip(f"Last error: {escape_mrkdwn(failure.error)}", 2_900))),
        ContextBlock(
            elements=[
                mrkdwn(
                    f"Check it with `runbook source list --tenant {escape_mrkdwn(failure.tenant)}`"
                    f" or `/runbook sources`."
                )
            ]
        ),
    ]
    return build_card(escape_mrkdwn(text), blocks)
