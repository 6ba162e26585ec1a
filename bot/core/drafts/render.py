"""A draft as the Markdown runbook a reviewer reads: frontmatter, the tenant's section names,
each step with its command, who posted it and a link to its message."""

from __future__ import annotations

import json

from bot.core.drafts.compose import Quote, RunbookDraft, Step
from rag import CHANGES_STATE

NOTHING_TO_DRAFT = (
    "This thread has no commands and no message saying what fixed it, so there is nothing to "
    "write down yet. Draft again once the fix is in the thread."
)


def render_markdown(
    draft: RunbookDraft, *, title: str | None = None, owner: str | None = None
) -> str:
    """The whole runbook file (frontmatter included)."""
    title = (title or draft.title).strip()
    front = [f"title: {json.dumps(title)}"]
    if owner:
        front.append(f"owner: {json.dumps(owner)}")
    lines = ["---", *front, "---", "", f"# {title}", "", *render_sections(draft)]
    return "\n".join(lines).rstrip() + "\n"


def render_sections(draft: RunbookDraft, level: int = 2) -> list[str]:
    """The body under the title; ``level`` 3 when appended as a section of another runbook."""
    h = "#" * level
    head = draft.headings
    lines = [_provenance(draft), ""]
    if draft.symptoms or draft.observations:
        lines += [f"{h} {head.symptoms}", ""]
        lines += [f"- {s}" for s in draft.symptoms]
        lines += [f"- {_quoted(q)}" for q in draft.observations]
        lines.append("")
    if draft.diagnosis:
        lines += [f"{h} {head.diagnosis}", "", *_steps(draft.diagnosis)]
    lines += [f"{h} {head.mitigation}", ""]
    if draft.mitigation:
        lines += _steps(draft.mitigation)
    else:
        lines += ["The thread does not say what fixed it.", ""]
    for quote in draft.fix:
        lines += [f"> {_quoted(quote)}", ""]
    if draft.verification:
        lines += [f"{h} {head.verification}", "", *_steps(draft.verification)]
    if draft.open_questions:
        lines += [f"{h} {head.open_questions}", ""]
        lines += [f"- {_quoted(q)}" for q in draft.open_questions]
        lines.append("")
    return lines


def _provenance(draft: RunbookDraft) -> str:
    said = (
        f"_Drafted from [an incident thread in #{draft.channel_name}]({draft.thread_link}): "
        "every step below was posted there, by the person named, in this order._"
    )
    if draft.redactions:
        one = draft.redactions == 1
        noun, verb = ("secret", "was") if one else ("secrets", "were")
        said += f" _{draft.redactions} {noun} posted in the thread {verb} redacted._"
    return said


def _steps(steps: tuple[Step, ...]) -> list[str]:
    lines: list[str] = []
    for n, step in enumerate(steps, 1):
        mark = f"{CHANGES_STATE} ({', '.join(step.changes_state)}): " if step.changes_state else ""
        note = step.note or "Run"
        lines.append(f"{n}. {mark}{note} — [{step.author}]({step.link})")
        lines += ["", "   ```", *[f"   {line}" for line in step.command.splitlines()], "   ```", ""]
    return lines


def _quoted(quote: Quote) -> str:
    return f"“{quote.text}” — [{quote.author}]({quote.link})"
