"""The weekly digest posted by ``runbook digest``: the gap report's headlines in one message."""

from __future__ import annotations

from collections.abc import Sequence

from slack_sdk.models.blocks import Block, ContextBlock, HeaderBlock, SectionBlock

from bot.core.feedback_reasons import reason_label
from bot.core.gaps import GapReport
from bot.slack.blocks.card import Card, build_card
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
        f"• *{_name(g.label)}* ({g.kind}) — {g.count} question{_s(g.count)}"
        for g in report.gaps[:TOP]
    ]
    downvoted = [
        f"• *{_name(r.title)}* — {r.down} :thumbsdown: ("
        + ", ".join(f"{reason_label(k)} {v}" for k, v in r.reasons.items())
        + ")"
        for r in report.downvoted[:TOP]
    ]
    stale = [
        f"• *{_name(r.title)}* — updated {r.age_days} days ago, cited in {r.answers} "
        f"answer{_s(r.answers)}"
        for r in report.stale[:TOP]
    ]
    blocks: list[Block] = [
        HeaderBlock(text=clip(f"Runbook digest · {tenant} · last {days} days", 150)),
        SectionBlock(text=mrkdwn(summary)),
        *_part("Unanswered topics", gaps),
        *_part("Most :thumbsdown: runbooks", downvoted),
        *_part("Stale runbooks still in use", stale),
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


def _part(title: str, lines: Sequence[str]) -> list[Block]:
    body = "\n".join(lines) if lines else "_Nothing this period._"
    return [SectionBlock(text=mrkdwn(f"*{title}*\n{body}"))]


def _name(text: str) -> str:
    return clip(escape_mrkdwn(one_line(text)), NAME_MAX)


def _s(count: int) -> str:
    return "" if count == 1 else "s"
