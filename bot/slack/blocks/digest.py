"""The weekly digest ``runbook digest`` sends: the gap report's headlines in one message, to
each owner for their own rows (or once to a channel for the whole tenant)."""

from __future__ import annotations

from collections.abc import Sequence

from slack_sdk.models.blocks import ActionsBlock, Block, ContextBlock, HeaderBlock, SectionBlock

from bot.core.gaps.report import GapReport
from bot.core.owners.feedback_reasons import reason_label
from bot.slack.blocks.card import Card, build_card, button
from bot.slack.blocks.draft_offer import WRITE_RUNBOOK
from bot.slack.blocks.text import clip, escape_mrkdwn, mrkdwn, one_line

TOP = 5
NAME_MAX = 80


def render_digest(report: GapReport, *, days: int) -> Card:
    t = report.totals
    tenant = clip(one_line(report.tenant), NAME_MAX)
    summary = (
        f"*{t['questions']}* questions · *{t['answered']}* answered · "
        f"*{t['abstained']}* unanswered (*{t['open_gaps']}* still open) · "
        f"*{t['up']}* :thumbsup: · *{t['down']}* :thumbsdown:"
    )
    gaps = [
        f"• *{_name(g.label or 'no shared terms')}* — {g.count} question{_s(g.count)} · "
        f"owner {_name(g.owner)} · "
        + (
            f"nearest runbook {_name(g.nearest_title or g.nearest_runbook)}"
            if g.nearest_runbook
            else f"no runbook covers this: `runbook gaps --draft {escape_mrkdwn(g.id)}`"
        )
        for g in report.gaps[:TOP]
    ]
    downvoted = [
        f"• *{_name(r.title)}* — {r.down} :thumbsdown: ("
        + ", ".join(f"{v} {reason_label(k)}" for k, v in r.reasons.items())
        + f") · owner {_name(r.owner)}"
        for r in report.downvoted[:TOP]
    ]
    stale = [
        f"• *{_name(r.title)}* — updated {r.age_days} days ago, cited in {r.answers} "
        f"answer{_s(r.answers)} ({r.downvoted_answers} :thumbsdown:, {r.abstained_near} "
        f"unanswered near it) · owner {_name(r.owner)}"
        for r in report.stale[:TOP]
    ]
    blocks: list[Block] = [
        HeaderBlock(text=clip(f"Runbook digest · {tenant} · last {days} days", 150)),
        *(
            [ContextBlock(elements=[mrkdwn(f"Your rows, as owner {_name(report.owner)}")])]
            if report.owner
            else []
        ),
        SectionBlock(text=mrkdwn(summary)),
        *_part("Unanswered questions by meaning", gaps),
        *_draft_offers(report),
        *_part(
            "Most :thumbsdown: runbooks (counted against the runbook an answer opened with)",
            downvoted,
        ),
        *_part("Stale runbooks that matter", stale),
        ContextBlock(
            elements=[
                mrkdwn(
                    f"Full report: `runbook gaps --tenant {escape_mrkdwn(tenant)} "
                    f"--since {days}d --html gaps.html`"
                )
            ]
        ),
    ]
    text = (
        f"Runbook digest for {tenant}: {t['questions']} questions, "
        f"{t['open_gaps']} unanswered still open, {t['down']} not-helpful votes"
    )
    return build_card(escape_mrkdwn(text), blocks)


def _draft_offers(report: GapReport) -> list[Block]:
    """ "Write the runbook" for each shown gap asked in a Slack thread and not drafted yet: the
    review modal of the thread of its latest question (``bot.slack.listeners.draft_offers``)."""
    offers = [
        button(f"Write the runbook: {one_line(g.label or g.id)}", WRITE_RUNBOOK, g.thread_answer)
        for g in report.gaps[:TOP]
        if g.thread_answer and g.thread_draft is None
    ]
    return [ActionsBlock(elements=offers)] if offers else []


def _part(title: str, lines: Sequence[str]) -> list[Block]:
    body = "\n".join(lines) if lines else "_Nothing this period._"
    return [SectionBlock(text=mrkdwn(f"*{title}*\n{body}"))]


def _name(text: str) -> str:
    return clip(escape_mrkdwn(one_line(text)), NAME_MAX)


def _s(count: int) -> str:
    return "" if count == 1 else "s"
