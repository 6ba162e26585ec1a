"""Cards of the incident channel: the automatic alert answer's marks, follow-up controls, the
DM introduction and the short confirmations the incident-channel buttons reply with."""

from __future__ import annotations

from slack_sdk.models.blocks import ActionsBlock, ContextBlock, HeaderBlock, SectionBlock

from bot.slack.blocks.card import Card, build_card, button
from bot.slack.blocks.text import clip, escape_mrkdwn, mrkdwn, one_line

MUTE_ALERT = "mute_alert"
STOP_FOLLOWING = "stop_following"
AUTOMATIC_NOTE = (
    ":robot_face: Posted automatically because this channel has alert answers switched on."
)
ALERT_NAME_MAX = 150
SUGGESTED_QUESTIONS = (
    "How do I fail over the primary database?",
    "Pods are crash looping after a deploy, what do I check first?",
    "How do I roll back a bad deploy?",
)


def mark_automatic(card: Card, answer_id: str | None) -> Card:
    """An alert answer nobody asked for says so on top, and offers to stay quiet next time."""
    blocks = [ContextBlock(elements=[mrkdwn(AUTOMATIC_NOTE)]).to_dict(), *card.blocks]
    if answer_id:
        mute = button("Mute this alert here", MUTE_ALERT, answer_id)
        blocks.append(ActionsBlock(elements=[mute]).to_dict())
    return build_card(card.text, blocks)


def add_stop_following(card: Card, answer_id: str | None) -> Card:
    """A follow-up answer came without a mention: one click ends that for the thread."""
    if not answer_id:
        return card
    stop = button("Stop following this thread", STOP_FOLLOWING, answer_id)
    return build_card(card.text, [*card.blocks, ActionsBlock(elements=[stop]).to_dict()])


def render_dm_intro() -> Card:
    questions = "\n".join(f"• {q}" for q in SUGGESTED_QUESTIONS)
    blocks = [
        HeaderBlock(text="Hi, I'm runbook-bot"),
        SectionBlock(
            text=mrkdwn(
                "Ask me incident questions here and I answer from your team's runbooks, quoting "
                "the passages I used. When the runbooks don't cover something, I say so instead "
                "of guessing."
            )
        ),
        SectionBlock(text=mrkdwn(f"*Try asking*\n{questions}")),
    ]
    return build_card("Hi, I'm runbook-bot: ask me incident questions from your runbooks.", blocks)


def render_muted(alert_name: str | None) -> Card:
    if alert_name is None:
        text = "That alert answer is no longer known here, so nothing was muted."
    else:
        name = clip(escape_mrkdwn(one_line(alert_name)), ALERT_NAME_MAX)
        text = (
            f"Muted: I won't answer *{name}* in this channel again. Switching the channel's "
            "alert answers on again (`runbook channel alerts … on`) lifts every mute."
        )
    return build_card(text, [SectionBlock(text=mrkdwn(text))])


def render_unfollowed() -> Card:
    text = "OK, I'll stop answering in this thread unless someone mentions me."
    return build_card(text, [SectionBlock(text=mrkdwn(text))])
