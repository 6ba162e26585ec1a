"""Buttons on our cards: feedback (``Action.Execute`` verb ``feedback``) and Retry.

A vote is stored once per user and answer (a second click changes it) and answered with the
same card for the clicker, the vote acknowledged in place of the buttons (synchronously: the
invoke's response is the answer). Retry queues a ``teams.retry`` job, answers with "Searching…"
for the clicker, and the job replaces the card for everyone when the new answer is ready.
Clients without ``Action.Execute`` send the ``Action.Submit`` fallback as a message instead.
"""

from __future__ import annotations

from typing import Any

from microsoft_agents.activity import Activity
from microsoft_agents.hosting.core import AgentApplication, TurnContext, TurnState

from bot.core.answers_store import StoredAnswer
from bot.teams.bot import TeamsBot
from bot.teams.cards import (
    Json,
    render_answer_gone,
    render_not_connected,
    render_result,
    render_searching,
)
from bot.teams.invokes import as_dict, card_response, respond, value_of
from bot.teams.job_requests import RETRY, RetryRequest
from bot.teams.tenancy import find_teams_tenant
from bot.teams.threads import aad_tenant_of, dedupe_key

CARD_VERBS = frozenset({"feedback", "retry"})
VOTES = frozenset({"up", "down"})


def register_card_actions(app: AgentApplication[TurnState], bot: TeamsBot) -> None:
    async def on_card_action(context: TurnContext, state: TurnState) -> None:
        activity = context.activity
        bot.teams_metrics.activities_received.labels("adaptiveCard/action").inc()
        action = as_dict(value_of(activity).get("action"))
        card = await _act(bot, activity, str(action.get("verb") or ""), as_dict(action.get("data")))
        await respond(context, card_response(card))

    app.invoke("adaptiveCard/action")(on_card_action)


async def on_card_submit(bot: TeamsBot, activity: Activity, value: dict[str, Any]) -> None:
    """The ``Action.Submit`` fallback: same effect; old clients keep the card as it was."""
    bot.teams_metrics.activities_received.labels("card_submit").inc()
    await _act(bot, activity, str(value.get("verb")), value)


async def _act(bot: TeamsBot, activity: Activity, verb: str, data: dict[str, Any]) -> Json:
    aad = aad_tenant_of(activity)
    tenant = await find_teams_tenant(bot.store, aad)
    if tenant is None:
        return render_not_connected(aad)
    answer_id = data.get("answer_id")
    if verb not in CARD_VERBS or not isinstance(answer_id, str):
        return render_answer_gone()
    if verb == "retry":
        stored = await bot.answers.load(tenant, answer_id)
        if stored is None:
            return render_answer_gone()
        await _retry(bot, activity, stored)
        return render_searching()
    vote = data.get("vote")
    user = activity.from_property.aad_object_id or activity.from_property.id
    if vote not in VOTES or not user:
        return render_answer_gone()
    if not await bot.answers.record_feedback(tenant, answer_id, user, str(vote)):
        return render_answer_gone()
    stored = await bot.answers.load(tenant, answer_id)
    return render_result(stored.result, vote=str(vote)) if stored else render_answer_gone()


async def _retry(bot: TeamsBot, activity: Activity, stored: StoredAnswer) -> None:
    reference = activity.get_conversation_reference().model_copy(update={"activity_id": None})
    placement = stored.placement
    if placement.conversation_id and placement.service_url and reference.conversation:
        conversation = reference.conversation.model_copy(update={"id": placement.conversation_id})
        reference = reference.model_copy(
            update={"conversation": conversation, "service_url": placement.service_url}
        )
    request = RetryRequest(
        reference=reference,
        tenant=stored.tenant,
        answer_id=stored.answer_id,
        message_id=stored.message_ts or activity.reply_to_id,
    )
    await bot.accept(dedupe_key(activity), RETRY, request.payload())
