"""The Teams message a runbook's owner gets: the 👎 reasons batched since the last one, each
with the question (while retained) and the quote the answer cited. Untrusted text only in
verbatim ``TextRun``s; at most ``MAX_NOTES`` notes, so the card stays within the size limit."""

from __future__ import annotations

from datetime import UTC

from bot.core.owners.feedback_reasons import reason_label
from bot.core.owners.queue import OwnerBatch, OwnerNote
from bot.teams.cards.elements import Json, adaptive_card, clip, link_run, one_line, rich_text, run
from bot.teams.cards.elements import text_block as our_text

MAX_NOTES = 10
TITLE_MAX = 120
TEXT_MAX = 600


def render_owner_note(batch: OwnerBatch) -> Json:
    count = len(batch.notes)
    plural = "s" if count > 1 else ""
    title = clip(one_line(batch.title), TITLE_MAX) or batch.document_id
    body: list[Json] = [
        our_text("Feedback on your runbook", size="Large", weight="Bolder"),
        rich_text(
            link_run(title, batch.url, weight="Bolder"),
            run(f" ({clip(one_line(batch.document_id), TITLE_MAX)}) got {count} "),
            run(f'"not helpful" vote{plural} with a reason. You are listed as its owner.'),
        ),
    ]
    for note in batch.notes[:MAX_NOTES]:
        body += _note(note)
    if count > MAX_NOTES:
        body.append(our_text(f"+{count - MAX_NOTES} more, not shown (see `runbook gaps`)."))
    return adaptive_card(body)


def _note(note: OwnerNote) -> list[Json]:
    parts: list[Json] = [
        rich_text(run("Reason: ", weight="Bolder"), run(reason_label(note.reason)), separator=True)
    ]
    if note.comment and (comment := one_line(note.comment)):
        parts.append(rich_text(run("Comment: ", weight="Bolder"), run(clip(comment, TEXT_MAX))))
    if note.question and (question := one_line(note.question)):
        parts.append(rich_text(run("Question: ", weight="Bolder"), run(clip(question, TEXT_MAX))))
    else:
        parts.append(our_text("_The question's text is no longer retained._"))
    if note.quote and (quote := one_line(note.quote)):
        parts.append(rich_text(run(clip(quote, TEXT_MAX), italic=True)))
    when = note.created_at.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")
    parts.append(rich_text(run(when, isSubtle=True)))
    return parts
