"""Buttons on our cards: feedback (``Action.Execute`` verb ``feedback``), the 👎 reason form
(verb ``feedbackReason``), a runbook section (``showSection``), Retry, and the incident
channel's Mute this alert here (``muteAlert``) and Stop following this thread (``stopFollowing``).

A vote is stored once per user and answer (a second click changes it) and answered with the
same card for the clicker, the vote acknowledged in place of the buttons (synchronously: the
invoke's response is the answer); a 👎 also carries the reason form, whose reason is stored on
that vote and queued for the cited runbooks' owners, as the Slack modal does. Retry queues a
``teams.retry`` job, answers with "Searching…" for the clicker, and the job replaces the card
for everyone when the new answer is ready.
Clients without ``Action.Execute`` send the ``Action.Submit`` fallback as a message instead.
"""

from __future__ import annotations

import json
from typing import Any

from microsoft_agents.activity import Activity
from microsoft_agents.hosting.core import AgentApplication, TurnContext, TurnState

from bot.core.alerts.memory import AlertMemory
from bot.core.alerts.threads import unfollow_thread
from bot.core.answers.section_choice import allowed, parse_choice
from bot.core.answers.store import StoredAnswer
from bot.core.owners.feedback_reasons import REASONS, record_reason
from bot.core.owners.queue import cited_quotes, queue_owner_notes
from bot.teams.bot import TeamsBot
from bot.teams.cards import (
    COMMENT_INPUT,
    PICK_A_REASON,
    REASON_INPUT,
    REASON_VERB,
    Json,
    render_answer_gone,
    render_not_connected,
    render_result,
    render_searching,
)
from bot.teams.cards.incident import (
    MUTE_VERB,
    UNFOLLOW_VERB,
    UNFOLLOWED_NOTICE,
    muted_notice,
    with_notice,
)
from bot.teams.cards.runbook import SECTION_DATA, SECTION_VERB
from bot.teams.invokes import as_dict, card_response, respond, value_of
from bot.teams.jobs.requests import RETRY, RetryRequest
from bot.teams.tenancy import find_teams_tenant
from bot.teams.threads import aad_tenant_of, dedupe_key

CARD_VERBS = frozenset({"feedback", REASON_VERB, "retry", MUTE_VERB, UNFOLLOW_VERB, SECTION_VERB})
SECTION_REFUSED = "That runbook section is not part of this answer."
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
    if verb == SECTION_VERB:
        return await _section(bot, tenant, answer_id, data)
    user = activity.from_property.aad_object_id or activity.from_property.id
    if verb in (MUTE_VERB, UNFOLLOW_VERB):
        return await _quiet(bot, tenant, answer_id, user, verb) if user else render_answer_gone()
    if verb == REASON_VERB:
        return await _reason(bot, tenant, answer_id, user, data) if user else render_answer_gone()
    vote = data.get("vote")
    if vote not in VOTES or not user:
        return render_answer_gone()
    if not await bot.answers.record_feedback(tenant, answer_id, user, str(vote)):
        return render_answer_gone()
    stored = await bot.answers.load(tenant, answer_id)
    if stored is None:
        return render_answer_gone()
    return render_result(stored.result, vote=str(vote), section=stored.section)


async def _section(bot: TeamsBot, tenant: str, answer_id: str, data: dict[str, Any]) -> Json:
    """The card with the chosen section of its runbook, for the clicker; remembered, so later
    redraws keep it. A runbook the answer (loaded for this tenant) does not name is refused."""
    stored = await bot.answers.load(tenant, answer_id)
    choice = parse_choice(
        json.dumps(
            {"a": answer_id, "d": data.get("document_id"), "s": data.get(SECTION_DATA)},
        )
    )
    if stored is None or choice is None:
        return render_answer_gone()
    if not allowed(stored, choice):
        shown = render_result(stored.result, section=stored.section)
        return with_notice(shown, SECTION_REFUSED)
    await bot.answers.show_section(tenant, stored.answer_id, choice.section)
    return render_result(stored.result, section=choice.section)


async def _reason(
    bot: TeamsBot, tenant: str, answer_id: str, user: str, data: dict[str, Any]
) -> Json:
    """Store the 👎's reason and queue it for the owners; no valid reason → the form again."""
    stored = await bot.answers.load(tenant, answer_id)
    if stored is None:
        return render_answer_gone()
    reason = data.get(REASON_INPUT)
    if not isinstance(reason, str) or reason not in REASONS:
        return render_result(
            stored.result, vote="down", reason_error=PICK_A_REASON, section=stored.section
        )
    typed = data.get(COMMENT_INPUT)
    comment = typed if isinstance(typed, str) and typed.strip() else None
    cited = cited_quotes(stored)
    if not await record_reason(
        bot.store,
        stored.tenant,
        stored.answer_id,
        user,
        reason=reason,
        comment=comment,
        documents=[c.document_id for c in cited],
    ):
        return render_answer_gone()
    await queue_owner_notes(
        bot.store,
        stored.tenant,
        stored.answer_id,
        user,
        reason=reason,
        comment=comment,
        question=stored.question,
        cited=cited,
        permalink=None,  # no Teams message link is built yet: the owner gets the quote
        team_id=stored.placement.team_id,
        enterprise_id=stored.placement.enterprise_id,
        surface="teams",
        service_url=stored.placement.service_url,
    )
    return render_result(stored.result, vote="down", reason=reason, section=stored.section)


async def _quiet(bot: TeamsBot, tenant: str, answer_id: str, user: str, verb: str) -> Json:
    """Mute the alert behind an automatic answer in its channel, or stop following the
    answer's thread; the clicker sees the answer again with what was done."""
    stored = await bot.answers.load(tenant, answer_id)
    if stored is None:
        return render_answer_gone()
    card = render_result(stored.result, section=stored.section)
    if verb == MUTE_VERB:
        memory = AlertMemory(bot.store, repeat_window_min=bot.settings.alert_repeat_window_min)
        return with_notice(card, muted_notice(await memory.mute(tenant, answer_id, user)))
    placement = stored.placement
    if placement.channel_id and placement.thread_ts:
        await unfollow_thread(
            bot.store,
            tenant,
            placement.team_id,
            placement.channel_id,
            placement.thread_ts,
            user,
        )
    return with_notice(card, UNFOLLOWED_NOTICE)


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
