"""The "Ask runbooks" message action (command id ``askRunbooks``) on an alert post.

``composeExtension/fetchTask`` opens a dialog with the question built from the post;
``composeExtension/submitAction`` queues a ``teams.answer`` job and answers 200 at once (Teams
allows 5 s); the answer card is then posted into the post's thread by the job worker.
"""

from __future__ import annotations

from microsoft_agents.hosting.core import AgentApplication, TurnContext, TurnState

from bot.core.dedupe import Claim
from bot.teams.alerts import read_message_payload
from bot.teams.bot import TeamsBot
from bot.teams.cards import QUESTION_INPUT, neutral, render_question_dialog
from bot.teams.drafts.action import DELIVER, DraftAction
from bot.teams.drafts.delivery_job import DraftDeliverJob
from bot.teams.drafts.dialog import DRAFT_COMMAND
from bot.teams.graph.client import GraphClient
from bot.teams.invokes import as_dict, message_task, respond, value_of
from bot.teams.jobs.requests import ANSWER, AnswerRequest
from bot.teams.threads import (
    aad_tenant_of,
    alert_thread_reference,
    channel_of,
    dedupe_key,
)

COMMAND_ID = "askRunbooks"
ALREADY_ANSWERING = "Already answering: the answer will appear in the post's thread."


def register_message_action(app: AgentApplication[TurnState], bot: TeamsBot) -> None:
    max_chars = bot.settings.max_question_chars
    drafts = DraftAction(bot, GraphClient(bot.settings))  # "Draft a runbook from this thread"
    bot.job_handlers.register(DELIVER, DraftDeliverJob(bot))

    async def fetch_task(context: TurnContext, state: TurnState) -> None:
        bot.teams_metrics.activities_received.labels("composeExtension/fetchTask").inc()
        if value_of(context.activity).get("commandId") == DRAFT_COMMAND:
            await drafts.fetch_task(context)
            return
        alert = read_message_payload(value_of(context.activity).get("messagePayload"))
        question = fit_question(alert.question, max_chars)
        await respond(context, render_question_dialog(question, max_chars=max_chars))

    async def submit_action(context: TurnContext, state: TurnState) -> None:
        activity = context.activity
        bot.teams_metrics.activities_received.labels("composeExtension/submitAction").inc()
        value = value_of(activity)
        if value.get("commandId") == DRAFT_COMMAND:
            await drafts.submit_action(context)
            return
        payload = value.get("messagePayload")
        alert = read_message_payload(payload)
        typed = as_dict(value.get("data")).get(QUESTION_INPUT)
        question = fit_question(typed if isinstance(typed, str) else alert.question, max_chars)
        message_id = _message_id(payload)
        request = AnswerRequest(
            reference=alert_thread_reference(activity, message_id),
            aad_tenant=aad_tenant_of(activity),
            channel_id=channel_of(activity),
            question=question,
            hints=alert.hints,
            entry="shortcut",
        )
        # Keyed on the invoke: a redelivered copy is the same ask, while asking again on the
        # same post (after a runbook fix, say) is a new one and gets a new answer.
        claim = await bot.accept(dedupe_key(activity), ANSWER, request.payload())
        if claim is Claim.DUPLICATE:
            await respond(context, message_task(ALREADY_ANSWERING))
        else:
            await respond(context)  # 200, no body: the answer follows in the thread

    app.invoke("composeExtension/fetchTask")(fetch_task)
    app.invoke("composeExtension/submitAction")(submit_action)


def fit_question(text: str, max_chars: int) -> str:
    """Whitespace collapsed and cut at a word boundary, so a long alert still gets an answer.

    Line breaks stay (blank lines go): the alert parser reads ``summary: ...`` and
    ``- alertname = ...`` lines as fields only while they are lines.
    """
    lines = (" ".join(line.split()) for line in neutral(text).splitlines())
    collapsed = "\n".join(line for line in lines if line)
    if len(collapsed) <= max_chars:
        return collapsed
    cut = collapsed[:max_chars]
    boundary = max(cut.rfind(" "), cut.rfind("\n"))
    return cut[:boundary].rstrip() if boundary > 0 else cut


def _message_id(payload: object) -> str | None:
    """The root of the acted-on post's thread: its replyToId for a reply, else its own id."""
    if not isinstance(payload, dict):
        return None
    for key in ("replyToId", "id"):
        value = payload.get(key)
        if isinstance(value, str) and value:
            return value
    return None
