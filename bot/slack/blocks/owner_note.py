"""The message a runbook's owner gets: the 👎 reasons batched since the last one, each with the
question (while retained), the quote the answer cited from the runbook, and the thread's link.

Questions, comments and quotes are untrusted: escaped in mrkdwn, quotes as literal rich text.
"""

from __future__ import annotations

from datetime import UTC

from slack_sdk.models.blocks import (
    Block,
    ContextBlock,
    DividerBlock,
    HeaderBlock,
    RichTextBlock,
    RichTextQuoteElement,
    SectionBlock,
)
from slack_sdk.models.blocks.block_elements import RichTextElementParts

from bot.core.owners.feedback_reasons import reason_label
from bot.core.owners.queue import OwnerBatch, OwnerNote
from bot.slack.blocks.card import Card, build_card
from bot.slack.blocks.text import clean, clip, escape_mrkdwn, link, mrkdwn, one_line

MAX_NOTES = 10  # 4 blocks each, inside Slack's 50
TITLE_MAX = 120
QUESTION_MAX = 400
COMMENT_MAX = 600
QUOTE_MAX = 600


def render_owner_note(batch: OwnerBatch) -> Card:
    title = clip(escape_mrkdwn(one_line(batch.title)) or batch.document_id, TITLE_MAX)
    count = len(batch.notes)
    plural = "s" if count > 1 else ""
    intro = (
        f"{link(batch.url, f'*{title}*')} (`{escape_mrkdwn(batch.document_id)}`) got {count} "
        f'"not helpful" vote{plural} with a reason. You are listed as its owner.'
    )
    blocks: list[Block] = [
        HeaderBlock(text="Feedback on your runbook"),
        SectionBlock(text=mrkdwn(intro)),
    ]
    for note in batch.notes[:MAX_NOTES]:
        blocks += [DividerBlock(), *_note_blocks(note)]
    if count > MAX_NOTES:
        more = f"+{count - MAX_NOTES} more, not shown to fit in Slack (see `runbook gaps`)"
        blocks.append(ContextBlock(elements=[mrkdwn(more)]))
    text = f"Feedback on your runbook {one_line(batch.title)}: {count} not-helpful vote{plural}"
    return build_card(escape_mrkdwn(clip(text, 300)), blocks)


def _note_blocks(note: OwnerNote) -> list[Block]:
    lines = [f"*Reason:* {escape_mrkdwn(reason_label(note.reason))}"]
    if note.comment and (comment := clean(note.comment).strip()):
        lines.append(f"*Comment:* {clip(escape_mrkdwn(comment), COMMENT_MAX)}")
    if note.question and (question := one_line(note.question)):
        lines.append(f"*Question:* {clip(escape_mrkdwn(question), QUESTION_MAX)}")
    else:
        lines.append("_The question's text is no longer retained._")
    blocks: list[Block] = [SectionBlock(text=mrkdwn("\n".join(lines)))]
    if note.quote and (quote := clean(note.quote).strip()):
        text = RichTextElementParts.Text(text=clip(quote, QUOTE_MAX))
        blocks.append(RichTextBlock(elements=[RichTextQuoteElement(elements=[text])]))
    where = link(note.permalink, "Open the thread") if note.permalink else "Private answer"
    when = note.created_at.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")
    blocks.append(ContextBlock(elements=[mrkdwn(f"{where} · {when}")]))
    return blocks
