"""Fixed cards: not connected, help, searching placeholder, database down, internal error, and
a question that could not be answered in time."""

from __future__ import annotations

from bot.teams.cards.elements import Json, adaptive_card, clip, one_line, rich_text, run, text_block

_ID_MAX = 40
INTERNAL_ERROR = (
    "Something went wrong on runbook-bot's side, so this question was not answered. "
    "Try again in a minute; if it keeps happening, tell whoever runs runbook-bot."
)
STORE_UNAVAILABLE = (
    "The runbook database is unavailable, so this question was not answered. Try again in a minute."
)
SEARCHING = "Searching runbooks…"
TIMED_OUT = (
    "runbook-bot could not answer this question in time, so it was not answered. "
    "Ask again to get a fresh answer."
)


def render_not_connected(aad_tenant_id: str | None) -> Json:
    aad = clip(one_line(aad_tenant_id), _ID_MAX) or "AAD_TENANT_ID"
    body = [
        text_block(
            "This organisation isn't connected to runbook-bot", size="Large", weight="Bolder"
        ),
        text_block(
            "This Microsoft Teams organisation is not connected to runbook-bot, so there are "
            "no runbooks to search."
        ),
        text_block("**To connect it**, a runbook-bot admin runs"),
        rich_text(run(f"runbook teams tenant add {aad} TENANT", fontType="Monospace")),
        text_block("where TENANT names the runbook collection to search."),
    ]
    return adaptive_card(body)


def render_help() -> Json:
    body = [
        text_block("Ask runbook-bot", size="Large", weight="Bolder"),
        text_block(
            "I answer incident questions from your runbooks and quote the passages I used. "
            "When the runbooks don't cover a question, I say so instead of guessing."
        ),
        text_block(
            "**Ways to ask**\r"
            "- Mention me with a question in a channel post or thread; the answer goes in "
            "that thread\r"
            "- Send me a question in a chat\r"
            "- On an alert post, open **…** (More actions) › **Ask runbooks**: the answer "
            "goes in the alert's thread"
        ),
        text_block(
            "**Examples**\r"
            "- _@Runbook Bot how do I fail over the primary database?_\r"
            "- _@Runbook Bot KubePodCrashLooping payments-api_"
        ),
    ]
    return adaptive_card(body)


def render_searching() -> Json:
    return adaptive_card([text_block(SEARCHING, isSubtle=True)])


def render_internal_error() -> Json:
    return adaptive_card([text_block(INTERNAL_ERROR)])


def render_store_unavailable() -> Json:
    return adaptive_card([text_block(STORE_UNAVAILABLE)])


def render_answer_gone() -> Json:
    """A button on an answer this organisation no longer has (deleted, or never ours)."""
    return adaptive_card([text_block("This answer is no longer available; ask again.")])


def render_timed_out() -> Json:
    """A queued question past its deadline (or out of attempts): say so, never stay silent."""
    body = [
        text_block("Could not answer in time", size="Large", weight="Bolder"),
        text_block(TIMED_OUT),
    ]
    return adaptive_card(body)
