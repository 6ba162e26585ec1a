"""Fixed cards: workspace not connected, usage help, searching placeholder, database down,
internal error, and a question that could not be answered in time."""

from __future__ import annotations

from slack_sdk.models.blocks import ContextBlock, HeaderBlock, SectionBlock

from bot.slack.blocks.card import Card, build_card
from bot.slack.blocks.text import clip, escape_mrkdwn, mrkdwn, one_line

# Slack ids are about a dozen characters; anything longer is not worth showing whole.
_ID_MAX = 40

USAGE = (
    "*Ways to ask*\n"
    "• `/runbook <question>`: a private answer, with a button to share it in the channel\n"
    "• Mention @runbook-bot in a thread: the answer goes in that thread; in an alert's "
    "thread a bare mention asks about the alert\n"
    "• *Ask runbooks* in an alert message's ⋮ menu (message shortcut): answers in the "
    "alert's thread\n"
    "• `/runbook sources`: where your runbooks come from, and how their last syncs went"
)
EXAMPLES = (
    "*Examples*\n"
    "• `/runbook how do I fail over the primary database?`\n"
    "• `/runbook KubePodCrashLooping payments-api`\n"
    "• `@runbook-bot what does HighErrorRate on checkout mean?`"
)
INTERNAL_ERROR = (
    "Something went wrong on runbook-bot's side, so this question was not answered. "
    "Try again in a minute; if it keeps happening, tell whoever runs runbook-bot."
)

STORE_UNAVAILABLE = (
    "The runbook database is unavailable, so this question was not answered. Try again in a minute."
)

TIMED_OUT = (
    "runbook-bot could not answer this question in time, so it was not answered. "
    "Ask again to get a fresh answer."
)


def render_not_connected(*, team_id: str | None, enterprise_id: str | None) -> Card:
    team = clip(escape_mrkdwn(one_line(team_id)), _ID_MAX)
    enterprise = clip(escape_mrkdwn(one_line(enterprise_id)), _ID_MAX)
    which = f"This Slack workspace (`{team}`)" if team else "This Slack workspace"
    command = f"runbook workspace add {team or 'TEAM_ID'} TENANT"
    if enterprise:
        command += f" --enterprise {enterprise}"
    how = (
        f"*To connect it*, a runbook-bot admin runs\n```{command}```\n"
        "where `TENANT` names the runbook collection to search, or installs runbook-bot in "
        "this workspace from the app's install link."
    )
    blocks = [
        HeaderBlock(text="This workspace isn't connected to runbook-bot"),
        SectionBlock(
            text=mrkdwn(
                f"{which} is not connected to runbook-bot, so there are no runbooks to search."
            )
        ),
        SectionBlock(text=mrkdwn(how)),
    ]
    named = f"This Slack workspace ({team})" if team else "This Slack workspace"
    return build_card(f"{named} is not connected to runbook-bot.", blocks)


def render_usage() -> Card:
    blocks = [
        HeaderBlock(text="Ask runbook-bot"),
        SectionBlock(
            text=mrkdwn(
                "I answer incident questions from your runbooks and quote the passages I used. "
                "When the runbooks don't cover a question, I say so instead of guessing."
            )
        ),
        SectionBlock(text=mrkdwn(escape_mrkdwn(USAGE))),
        SectionBlock(text=mrkdwn(EXAMPLES)),
    ]
    return build_card(escape_mrkdwn("Ask runbook-bot: /runbook <question>"), blocks)


def render_searching() -> Card:
    text = "Searching runbooks…"
    return build_card(text, [ContextBlock(elements=[mrkdwn(f":mag: {text}")])])


def render_internal_error() -> Card:
    return build_card(INTERNAL_ERROR, [SectionBlock(text=mrkdwn(f":warning: {INTERNAL_ERROR}"))])


def render_store_unavailable() -> Card:
    return build_card(
        STORE_UNAVAILABLE, [SectionBlock(text=mrkdwn(f":warning: {STORE_UNAVAILABLE}"))]
    )


OUTSIDER = (
    "runbook-bot answers members of the workspace that installed it. Your organisation has "
    "not connected runbook-bot, so this question was not answered."
)


def render_outsider() -> Card:
    """For a user of another organisation in a shared channel: names none of the host's ids."""
    blocks = [
        HeaderBlock(text="runbook-bot isn't connected for you"),
        SectionBlock(text=mrkdwn(OUTSIDER)),
    ]
    return build_card(OUTSIDER, blocks)


def render_timed_out() -> Card:
    """A queued question past its deadline (or out of attempts): say so, never stay silent."""
    return build_card(
        TIMED_OUT,
        [
            HeaderBlock(text="Could not answer in time"),
            SectionBlock(text=mrkdwn(f":hourglass: {TIMED_OUT}")),
        ],
    )
