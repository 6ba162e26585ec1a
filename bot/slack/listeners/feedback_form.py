"""👎 with a reason: the modal a negative vote opens, and what its submission does.

The vote itself is stored by the feedback button (``bot/slack/listeners/actions.py``); submitting
the form
adds the reason and optional comment to that one vote, then queues a note for the owner of each
runbook the answer cited (``bot.core.owners.queue``), with the cited quote and the thread's link.
"""

from __future__ import annotations

import logging
from typing import Any

import aiohttp
from slack_bolt.async_app import AsyncAck, AsyncApp
from slack_sdk.errors import SlackApiError
from slack_sdk.models.blocks import (
    InputBlock,
    Option,
    PlainTextInputElement,
    RadioButtonsElement,
    SectionBlock,
)
from slack_sdk.models.views import View
from slack_sdk.web.async_client import AsyncWebClient

from bot.core.answers.store import StoredAnswer
from bot.core.owners.feedback_reasons import COMMENT_MAX, REASONS, record_reason
from bot.core.owners.queue import cited_quotes, queue_owner_notes
from bot.slack.answering import Bot
from bot.slack.blocks.text import mrkdwn
from bot.slack.tenancy import origin_of, tenant_of

logger = logging.getLogger(__name__)

CALLBACK_ID = "feedback_reason"
REASON_BLOCK, COMMENT_BLOCK = "reason", "comment"


def register_feedback_form(app: AsyncApp, bot: Bot) -> None:
    app.view(CALLBACK_ID)(FeedbackForm(bot).submit)


def reason_view(answer_id: str) -> View:
    """The form: one required reason, an optional comment; the answer id rides in metadata."""
    options = [Option(value=code, label=label) for code, label in REASONS.items()]
    return View(
        type="modal",
        callback_id=CALLBACK_ID,
        private_metadata=answer_id,
        title="Not helpful",
        submit="Send",
        close="Cancel",
        blocks=[
            SectionBlock(
                text=mrkdwn("What was wrong? The runbook's owner gets your reason and the answer.")
            ),
            InputBlock(
                block_id=REASON_BLOCK,
                label="Reason",
                element=RadioButtonsElement(action_id=REASON_BLOCK, options=options),
            ),
            InputBlock(
                block_id=COMMENT_BLOCK,
                label="Anything to add?",
                optional=True,
                element=PlainTextInputElement(
                    action_id=COMMENT_BLOCK, multiline=True, max_length=COMMENT_MAX
                ),
            ),
        ],
    )


async def open_reason_form(client: AsyncWebClient, body: dict[str, Any], answer_id: str) -> None:
    """Open the form for the 👎 just clicked (``trigger_id`` is valid for 3 s)."""
    trigger_id = body.get("trigger_id")
    if not isinstance(trigger_id, str) or not trigger_id:
        return
    try:
        await client.views_open(trigger_id=trigger_id, view=reason_view(answer_id))
    except (SlackApiError, aiohttp.ClientError, TimeoutError) as exc:
        # The vote is stored already; only the optional reason is lost.
        logger.info("reason form not opened: %s", type(exc).__name__)


class FeedbackForm:
    def __init__(self, bot: Bot) -> None:
        self.bot = bot

    async def submit(self, ack: AsyncAck, body: dict[str, Any], client: AsyncWebClient) -> None:
        self.bot.tasks.adopt_current()
        view = body.get("view") or {}
        values = (view.get("state") or {}).get("values") or {}
        reason = _selected(values, REASON_BLOCK)
        if reason not in REASONS:
            await ack(response_action="errors", errors={REASON_BLOCK: "Pick a reason."})
            return
        await ack()  # closes the modal
        tenant = await tenant_of(self.bot.store, origin_of(body))
        answer_id = str(view.get("private_metadata") or "")
        stored = await self.bot.answers.load(tenant, answer_id) if tenant else None
        if stored is None:
            logger.info("reason for an answer that is gone (or another workspace's) ignored")
            return
        user_id = str((body.get("user") or {}).get("id") or "")
        comment = _typed(values, COMMENT_BLOCK)
        cited = cited_quotes(stored)
        if not await record_reason(
            self.bot.store,
            stored.tenant,
            stored.answer_id,
            user_id,
            reason=reason,
            comment=comment,
            documents=[c.document_id for c in cited],
        ):
            return
        await queue_owner_notes(
            self.bot.store,
            stored.tenant,
            stored.answer_id,
            user_id,
            reason=reason,
            comment=comment,
            question=stored.question,
            cited=cited,
            permalink=await _permalink(client, stored),
            team_id=stored.placement.team_id,
            enterprise_id=stored.placement.enterprise_id,
        )


async def _permalink(client: AsyncWebClient, stored: StoredAnswer) -> str | None:
    """A link to the answer in its thread; none for a private (ephemeral) answer."""
    placement = stored.placement
    ts = None if placement.ephemeral else stored.message_ts
    ts = ts or placement.thread_ts
    if placement.channel_id is None or ts is None:
        return None
    try:
        response = await client.chat_getPermalink(channel=placement.channel_id, message_ts=ts)
    except (SlackApiError, aiohttp.ClientError, TimeoutError) as exc:
        logger.info("no permalink for answer %s: %s", stored.answer_id, type(exc).__name__)
        return None
    permalink = response.get("permalink")
    return permalink if isinstance(permalink, str) else None


def _selected(values: dict[str, Any], block: str) -> str | None:
    option = ((values.get(block) or {}).get(block) or {}).get("selected_option") or {}
    value = option.get("value")
    return value if isinstance(value, str) else None


def _typed(values: dict[str, Any], block: str) -> str | None:
    value = ((values.get(block) or {}).get(block) or {}).get("value")
    return value if isinstance(value, str) and value.strip() else None
