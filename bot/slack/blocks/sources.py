"""Runbook sources in Slack: source lines, quote blocks, nearest runbooks, the search scope."""

from __future__ import annotations

from datetime import date

from slack_sdk.models.blocks import (
    ContainerBlock,
    RichTextBlock,
    RichTextElement,
    RichTextQuoteElement,
    RichTextSectionElement,
)
from slack_sdk.models.blocks.block_elements import RichTextElementParts

from bot.core.answers.citations import Source, state_label
from bot.slack.blocks.text import clean, clip, escape_mrkdwn, link, one_line, units
from rag import AskResult, Evidence, age_in_days

# Per-field caps (in units) so that one long title or owner cannot crowd out the rest.
LABEL_MAX = 100
OWNER_MAX = 50
UPDATED_MAX = 25
TITLE_MAX = 100  # container title and inline quote heading (Slack allows 150)
SCOPE_MAX = 60  # tenant and service names
STALE_AFTER_DAYS = 365  # RUNBOOK_STALE_AFTER_DAYS' default
# Quote text per citation number. Below the floor a quote is too short to check anything
# against, so callers never grant less; a second quote is skipped if less than a line is left.
QUOTE_FLOOR = 120
QUOTE_MAX = 700
_QUOTE_REST_MIN = 40


def source_label(evidence: Evidence) -> str:
    """``Title › Section`` in plain (unescaped) text."""
    title = one_line(evidence.title) or "Untitled runbook"
    path = [heading for heading in map(one_line, evidence.heading_path) if heading]
    # The first heading is usually the document's own H1: repeating it adds nothing.
    if path and path[0].casefold() == title.casefold():
        path = path[1:]
    return " › ".join([title, *path])


def source_line(
    evidence: Evidence,
    n: int | None = None,
    *,
    stale_after_days: int = STALE_AFTER_DAYS,
    today: date | None = None,
) -> str:
    """A mrkdwn line: number (or bullet), linked label, owner and last update when known."""
    parts = [link(evidence.url, clip(escape_mrkdwn(source_label(evidence)), LABEL_MAX))]
    if owner := one_line(evidence.owner):
        parts.append("owner " + clip(escape_mrkdwn(owner), OWNER_MAX))
    if updated := one_line(evidence.updated):
        parts.append(updated_note(updated, stale_after_days=stale_after_days, today=today))
    return ("•" if n is None else f"*[{n}]*") + " " + " · ".join(parts)


def updated_note(updated: str, *, stale_after_days: int, today: date | None = None) -> str:
    """ "updated N days ago", with a warning past the staleness threshold."""
    age = age_in_days(updated, today=today)
    if age is None:  # a frontmatter value that is not a date: show it as written
        return "updated " + clip(escape_mrkdwn(updated), UPDATED_MAX)
    when = "today" if age == 0 else f"{age} day{'s' if age != 1 else ''} ago"
    if age > stale_after_days:
        return f":warning: updated {when} (may be stale)"
    return f"updated {when}"


def quote_title(source: Source) -> str:
    """``[n] Title › Section``, led by the state-change label when the answer quotes such a
    command from it (first, so clipping a long title never cuts the warning)."""
    warning = f"{state_label(source.changes)} · " if source.changes else ""
    return clip(f"[{source.n}] {warning}{source_label(source.evidence)}", TITLE_MAX)


def quote_container(source: Source, budget: int) -> ContainerBlock:
    """The collapsible quote: expands in the client, no round trip (new in 2026)."""
    return ContainerBlock(
        title=quote_title(source),
        is_collapsible=True,
        default_collapsed=True,
        child_blocks=[RichTextBlock(elements=_quotes(source, budget))],
    )


def inline_quote(source: Source, budget: int) -> RichTextBlock:
    """The quote shown after "Show quote": plain blocks every client renders."""
    heading = RichTextSectionElement(
        elements=[RichTextElementParts.Text(text=quote_title(source), style={"bold": True})]
    )
    return RichTextBlock(elements=[heading, *_quotes(source, budget)])


def _quotes(source: Source, budget: int) -> list[RichTextElement]:
    # Rich text is literal: a quote saying <!channel> shows those characters and pings nobody.
    elements: list[RichTextElement] = []
    for quote in source.quotes:
        text = clean(quote).strip()
        if not text:
            continue
        if elements and budget < _QUOTE_REST_MIN:
            break
        text = clip(text, budget)
        budget -= units(text)
        elements.append(RichTextQuoteElement(elements=[RichTextElementParts.Text(text=text)]))
    return elements or [
        RichTextQuoteElement(elements=[RichTextElementParts.Text(text="(empty quote)")])
    ]


def search_scope(result: AskResult) -> str:
    """What was searched, as one escaped mrkdwn sentence."""
    tenant = clip(escape_mrkdwn(one_line(result.tenant)), SCOPE_MAX)
    where = f"the *{tenant}* runbooks" if tenant else "this workspace's runbooks"
    service = clip(escape_mrkdwn(one_line(result.service)), SCOPE_MAX)
    if not service:
        return f"Searched {where}."
    scoped = f"service *{service}*"
    widened = {
        "filtered_no_evidence": f"nothing matched {scoped}, so all services were searched",
        "filtered_low_quality": f"matches for {scoped} were weak, so all services were searched",
    }
    if result.fallback_reason is None:
        return f"Searched {where} for {scoped}."
    reason = widened.get(result.fallback_reason, f"the search was widened beyond {scoped}")
    return f"Searched {where}: {reason}."
