"""Messages to the bot: an @mention in a channel post or thread, a 1:1 or group chat message.
Channel messages without a mention (delivered by the app's resource-specific consent) go to
``bot.teams.incident.channel_messages``: alert posts and thread follow-ups.

Queued as a ``teams.answer`` job (with its dedupe claim) and answered with HTTP 202; the answer
card follows in the same thread (the mention's conversation id already carries
``;messageid=ROOT``) from whichever replica's worker claims the job. A bare mention gets
the help card. ``Action.Submit`` clicks from clients without ``Action.Execute`` arrive here too.
"""

from __future__ import annotations

import re

from microsoft_agents.activity import Activity
from microsoft_agents.hosting.core import AgentApplication, TurnContext, TurnState

from bot.core.conversation import storable
from bot.teams.bot import TeamsBot
from bot.teams.card_actions import CARD_VERBS, on_card_submit
from bot.teams.cards import neutral
from bot.teams.incident.channel_messages import is_unprompted, take_channel_message
from bot.teams.jobs.progress import show_typing_now
from bot.teams.jobs.requests import ANSWER, AnswerRequest
from bot.teams.threads import aad_tenant_of, channel_of, dedupe_key


def register_messages(app: AgentApplication[TurnState], bot: TeamsBot) -> None:
    async def on_message(context: TurnContext, state: TurnState) -> None:
        activity = context.activity
        bot.teams_metrics.activities_received.labels("message").inc()
        value = activity.value
        if isinstance(value, dict) and value.get("verb") in CARD_VERBS:
            await on_card_submit(bot, activity, value)
            return
        if is_unprompted(activity):
            await take_channel_message(bot, activity)
            return
        request = AnswerRequest(
            reference=activity.get_conversation_reference(),
            aad_tenant=aad_tenant_of(activity),
            channel_id=channel_of(activity),
            question=question_of(activity),
            hints=(),
            entry="mention",
        )
        await bot.accept(dedupe_key(activity), ANSWER, request.payload())
        await show_typing_now(context)

    async def ignore(context: TurnContext, state: TurnState) -> None:
        """Installs, membership changes, reactions, typing: nothing to answer."""

    app.add_route(lambda context: context.activity.type == "message", on_message)
    app.add_route(lambda context: context.activity.type not in ("message", "invoke"), ignore)


def question_of(activity: Activity) -> str:
    """The question without the bot's own mention (the SDK strips the exact entity text; the
    name variants Teams also sends are stripped here), other tags reduced to their text."""
    text = activity.text or ""
    name = activity.recipient.name if activity.recipient else None
    if name:
        text = re.sub(rf"<at[^>]*>\s*{re.escape(name)}\s*</at>", " ", text, flags=re.IGNORECASE)
    return storable(" ".join(neutral(text).split()))
