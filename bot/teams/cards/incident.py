"""Cards of the Teams incident channel: the automatic alert answer's note and Mute button, the
follow-up answer's "Stop following" button, and what the clicker sees after either (as in
Slack's ``bot.slack.blocks.incident``)."""

from __future__ import annotations

import copy

from bot.teams.cards.elements import Json, clip, execute, one_line, rich_text, run, text_block

MUTE_VERB = "muteAlert"
UNFOLLOW_VERB = "stopFollowing"
AUTOMATIC_NOTE = "🤖 Posted automatically because this channel has alert answers switched on."
ALERT_NAME_MAX = 150


def mark_automatic(card: Json, answer_id: str | None) -> Json:
    """An alert answer nobody asked for says so on top, and offers to stay quiet next time."""
    marked = copy.deepcopy(card)
    marked["body"] = [text_block(AUTOMATIC_NOTE, isSubtle=True, size="Small"), *marked["body"]]
    if answer_id:
        mute = execute(MUTE_VERB, "Mute this alert here", {"answer_id": answer_id})
        marked["actions"] = [*marked.get("actions", []), mute]
    return marked


def add_stop_following(card: Json, answer_id: str | None) -> Json:
    """A follow-up answer came without a mention: one click ends that for the thread."""
    if not answer_id:
        return card
    stop = execute(UNFOLLOW_VERB, "Stop following this thread", {"answer_id": answer_id})
    marked = copy.deepcopy(card)
    marked["actions"] = [*marked.get("actions", []), stop]
    return marked


def with_notice(card: Json, notice: str) -> Json:
    """The card as the clicker sees it after Mute or Stop following: the notice at its end."""
    shown = copy.deepcopy(card)
    # A TextRun: the alert's name came from the post, and is shown verbatim.
    shown["body"] = [*shown["body"], rich_text(run(notice, weight="Bolder"), spacing="Medium")]
    return shown


def muted_notice(alert_name: str | None) -> str:
    if alert_name is None:
        return "That alert answer is no longer known here, so nothing was muted."
    name = clip(one_line(alert_name), ALERT_NAME_MAX)
    return (
        f"Muted: I won't answer {name} in this channel again. Switching the channel's alert "
        "answers on again (runbook teams channel alerts … on) lifts every mute."
    )


UNFOLLOWED_NOTICE = "OK, I'll stop answering in this thread unless someone mentions me."
