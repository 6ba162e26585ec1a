"""Runbook sources on a card: source lines, hidden verbatim quotes, the search scope."""

from __future__ import annotations

from bot.core.answers.citations import Source, state_label
from bot.teams.cards.elements import Json, clip, link_run, neutral, one_line, rich_text, run
from rag import AskResult, Evidence

LABEL_MAX = 120
OWNER_MAX = 50
UPDATED_MAX = 25
SCOPE_MAX = 60
_QUOTE_REST_MIN = 40


def source_label(evidence: Evidence) -> str:
    """``Title › Section`` as plain, neutral text."""
    title = one_line(evidence.title) or "Untitled runbook"
    path = [heading for heading in map(one_line, evidence.heading_path) if heading]
    # The first heading is usually the document's own H1: repeating it adds nothing.
    if path and path[0].casefold() == title.casefold():
        path = path[1:]
    return clip(" › ".join([title, *path]), LABEL_MAX)


def source_line(evidence: Evidence, n: int | None = None) -> Json:
    """``[n] Title › Section`` (linked when the runbook has a safe URL), owner, last update."""
    inlines = [run(f"[{n}] " if n is not None else "• ", weight="Bolder")]
    inlines.append(link_run(source_label(evidence), evidence.url))
    details = []
    if owner := one_line(evidence.owner):
        details.append("owner " + clip(owner, OWNER_MAX))
    if updated := one_line(evidence.updated):
        details.append("updated " + clip(updated, UPDATED_MAX))
    if details:
        inlines.append(run(" · " + " · ".join(details), isSubtle=True))
    return rich_text(*inlines, spacing="Small")


def quote_id(n: int) -> str:
    return f"quote-{n}"


def quote_container(source: Source, budget: int) -> Json:
    """The verified quote, hidden until its toggle is clicked; text verbatim in TextRuns."""
    heading = rich_text(run(f"[{source.n}] {source_label(source.evidence)}", weight="Bolder"))
    if source.changes:
        heading["inlines"].append(run(f" · {state_label(source.changes)}", color="Attention"))
    quotes: list[Json] = []
    for quote in source.quotes:
        text = neutral(quote).strip()
        if not text:
            continue
        if quotes and budget < _QUOTE_REST_MIN:
            break
        text = clip(text, budget)
        budget -= len(text)
        quotes.append(rich_text(run(text), spacing="Small"))
    return {
        "type": "Container",
        "id": quote_id(source.n),
        "isVisible": False,
        "style": "emphasis",
        "items": [heading, *(quotes or [rich_text(run("(empty quote)"))])],
    }


def search_scope(result: AskResult) -> str:
    """What was searched, as one plain sentence (shown through a TextRun)."""
    tenant = clip(one_line(result.tenant), SCOPE_MAX)
    where = f"the {tenant} runbooks" if tenant else "this organisation's runbooks"
    service = clip(one_line(result.service), SCOPE_MAX)
    if not service:
        return f"Searched {where}."
    scoped = f"service {service}"
    widened = {
        "filtered_no_evidence": f"nothing matched {scoped}, so all services were searched",
        "filtered_low_quality": f"matches for {scoped} were weak, so all services were searched",
    }
    if result.fallback_reason is None:
        return f"Searched {where} for {scoped}."
    reason = widened.get(result.fallback_reason, f"the search was widened beyond {scoped}")
    return f"Searched {where}: {reason}."


def scope_footer(result: AskResult, note: str | None = None) -> Json:
    text = search_scope(result) + (f" {note}." if note else "")
    return rich_text(run(text, isSubtle=True, size="Small"), spacing="Medium", separator=True)
