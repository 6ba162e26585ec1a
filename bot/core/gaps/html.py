"""The gap report as one self-contained HTML page: matplotlib charts inlined as SVG, a table per
section, no script, font or image fetched from anywhere (glyphs are drawn as SVG paths). Words,
not emoji: a machine without an emoji font would show empty boxes. Each section fits one screen:
a chart of its first rows, with axis titles and whole labels (wrapped, never cut), then its table;
times are shown in the local time zone of the machine that renders the page.

Rendering is CPU work: call ``render_gap_html`` off the event loop.
"""

from __future__ import annotations

import io
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from html import escape

from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from bot.core.gaps.report import Gap, GapReport
from bot.core.owners.feedback_reasons import REASONS, reason_label

_COLOURS = ("#4C72B0", "#DD8452", "#55A868", "#C44E52", "#8172B3", "#937860")
# Bars and table rows per section: with the chart above it, about one screen.
_MAX_BARS = 8
_MAX_ROWS = 10
_WRAP = 34  # characters per line of a bar label
_STYLE = """
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:2rem auto;max-width:60rem;
color:#1d1c1d;padding:0 1rem}
h1{font-size:1.6rem}h2{margin-top:2.5rem;border-bottom:1px solid #ddd;padding-bottom:.3rem}
table{border-collapse:collapse;width:100%;margin-top:1rem;font-size:.9rem}
th,td{border:1px solid #ddd;padding:.35rem .5rem;text-align:left;vertical-align:top}
th{background:#f4f4f4}td.n{text-align:right}.muted{color:#666}
section{min-height:0;margin-bottom:2rem}.note{font-size:.9rem;color:#444}
pre{white-space:pre-wrap;background:#f7f7f7;padding:.5rem;font-size:.8rem}
.totals span{display:inline-block;margin-right:1.5rem}
figure{margin:1rem 0}svg{max-width:100%;height:auto}
code{white-space:pre-wrap}.nw{white-space:nowrap}
"""


def render_gap_html(report: GapReport) -> str:
    t = report.totals
    totals = " ".join(
        f"<span><b>{t[key]}</b> {label}</span>"
        for key, label in (
            ("questions", "questions"),
            ("answered", "answered"),
            ("abstained", "unanswered"),
            ("open_gaps", "still open"),
            ("up", "helpful"),
            ("down", "not helpful"),
        )
    )
    sections = [
        _gaps_section(report),
        _downvoted_section(report),
        _stale_section(report),
        _scores_section(report),
    ]
    title = f"Runbook gaps · {escape(report.tenant)}"
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        f"<title>{title}</title><style>{_STYLE}</style></head><body>"
        f"<h1>{title}</h1>"
        f'<p class="muted">Since {escape(local_time(report.since))} · generated '
        f"{escape(local_time(report.generated_at))} · stale after "
        f"{report.stale_after_days} days"
        + (f" · owner {escape(report.owner)}" if report.owner else "")
        + "</p>"
        f'<p class="totals">{totals}</p>{"".join(sections)}</body></html>\n'
    )


def _gaps_section(report: GapReport) -> str:
    gaps = report.gaps[:_MAX_BARS]
    chart = _bar_chart(
        [g.label or f"{g.id} (no shared terms)" for g in gaps],
        {
            "abstained": [g.abstained for g in gaps],
            "answered, then not helpful": [g.downvoted for g in gaps],
        },
        stacked=True,
        x_title="unanswered questions",
    )
    rows: list[list[str | _Number]] = [
        [
            f"<b>{escape(g.label) or '<span class=muted>(no shared terms)</span>'}</b>"
            f'<br><span class="muted">{escape(g.id)}</span>',
            _owner(g.owner),
            _n(g.count),
            "<br>".join(escape(e) for e in g.examples)
            or '<span class="muted">(text expired)</span>',
            _nearest(g),
            escape(local_time(g.last_asked)),
        ]
        for g in report.gaps
    ]
    head = ["Gap", "Owner", "Questions", "Examples", "Nearest runbook", "Last asked"]
    note = (
        "Questions grouped by meaning (similarity of the questions themselves, at least "
        f"{report.thresholds['cluster_similarity']:.2f} on average). A runbook is named only when "
        f"it is near (similarity at least {report.thresholds['nearest_similarity']:.2f})."
    )
    return _section("Unanswered questions by meaning", chart if gaps else "", head, rows, note)


def _nearest(gap: Gap) -> str:
    if gap.nearest_runbook is not None:
        return (
            f"{escape(gap.nearest_title or gap.nearest_runbook)}<br>"
            f'<span class="muted">{escape(gap.nearest_runbook)} · similarity '
            f"{gap.nearest_similarity:.2f}</span>"
        )
    return (
        "<b>No runbook covers this — write one.</b><br>"
        f'<span class="muted">Skeleton: <code>runbook gaps <span class="nw">--draft '
        f"{escape(gap.id)}</span></code></span>"
    )


def _downvoted_section(report: GapReport) -> str:
    shown = report.downvoted[:_MAX_BARS]
    # Every reason is passed, given or not, so each keeps its colour from one page to the next.
    series = {
        reason_label(code): [r.reasons.get(code, 0) for r in shown] for code in (*REASONS, "none")
    }
    chart = _bar_chart([r.title for r in shown], series, stacked=True, x_title="not-helpful votes")
    rows: list[list[str | _Number]] = [
        [
            escape(r.title),
            escape(r.document_id),
            _owner(r.owner),
            _n(r.down),
            "<br>".join(escape(f"{v} × {reason_label(k)}") for k, v in r.reasons.items()),
        ]
        for r in report.downvoted
    ]
    head = ["Runbook", "Document", "Owner", "Not helpful", "Reasons (by count)"]
    note = (
        "Each not-helpful vote counts against one runbook: the one its answer opened with "
        "(its first citation), not every runbook the answer cited."
    )
    return _section(
        "Runbooks by not-helpful votes and reason", chart if shown else "", head, rows, note
    )


def _stale_section(report: GapReport) -> str:
    shown = report.stale[:_MAX_BARS]
    chart = _bar_chart(
        [f"{r.title} ({r.age_days} days old)" for r in shown],
        {
            "answers citing it": [r.answers for r in shown],
            "answers voted not helpful": [r.downvoted_answers for r in shown],
            "unanswered questions near it": [r.abstained_near for r in shown],
        },
        x_title="questions",
        colours=("#4C72B0", "#C44E52", "#DD8452"),
    )
    rows: list[list[str | _Number]] = [
        [
            escape(r.title),
            escape(r.document_id),
            _owner(r.owner),
            escape(r.updated or ""),
            _n(r.age_days),
            _n(r.answers),
            _n(r.downvoted_answers),
            _n(r.abstained_near),
        ]
        for r in report.stale
    ]
    head = [
        "Runbook",
        "Document",
        "Owner",
        "Updated",
        "Age (days)",
        "Answers",
        "Not helpful",
        "Unanswered near it",
    ]
    note = (
        f"Older than {report.stale_after_days} days and cited by answers voted not helpful, or "
        "the near runbook of questions that were not answered; most answers first."
    )
    return _section("Stale runbooks that matter", chart if shown else "", head, rows, note)


def _scores_section(report: GapReport) -> str:
    shown = report.runbooks[:_MAX_BARS]
    chart = _bar_chart(
        [r.title for r in shown],
        {
            "answered": [r.answered for r in shown],
            "helpful": [r.up for r in shown],
            "not helpful": [r.down for r in shown],
        },
        colours=("#4C72B0", "#55A868", "#C44E52"),
        x_title="answers and votes",
    )
    rows: list[list[str | _Number]] = [
        [
            escape(r.title),
            escape(r.document_id),
            _owner(r.owner),
            _n(r.answered),
            _n(r.up),
            _n(r.down),
            _n("–" if r.helpful_share is None else f"{r.helpful_share:.0%}"),
        ]
        for r in report.runbooks
    ]
    head = ["Runbook", "Document", "Owner", "Answered", "Helpful", "Not helpful", "Helpful share"]
    return _section(
        "Answered, helpful and not helpful per runbook", chart if shown else "", head, rows
    )


def _section(
    title: str,
    chart: str,
    head: Sequence[str],
    rows: Sequence[Sequence[str | _Number]],
    note: str = "",
) -> str:
    intro = f'<p class="note">{escape(note)}</p>' if note else ""
    if not rows:
        return (
            f'<section><h2>{title}</h2>{intro}<p class="muted">Nothing in this period.</p>'
            "</section>"
        )
    header = "".join(f"<th>{escape(h)}</th>" for h in head)
    body = "".join("<tr>" + "".join(_cell(c) for c in row) + "</tr>" for row in rows[:_MAX_ROWS])
    more = (
        f'<p class="muted">{len(rows) - _MAX_ROWS} more rows: <code>runbook gaps --json</code></p>'
        if len(rows) > _MAX_ROWS
        else ""
    )
    figure = f"<figure>{chart}</figure>" if chart else ""
    return (
        f"<section><h2>{title}</h2>{intro}{figure}<table><tr>{header}</tr>{body}</table>"
        f"{more}</section>"
    )


def local_time(iso: str) -> str:
    """An ISO timestamp in this machine's time zone, as people write it: 2 Dec 2026, 19:04 CET."""
    moment = datetime.fromisoformat(iso).astimezone()
    return f"{moment.day} {moment:%b %Y, %H:%M %Z}"


@dataclass(frozen=True)
class _Number:
    """A right-aligned table cell."""

    text: str


def _owner(name: str) -> str:
    """An owner (``#sre-runbooks``, ``@jonas``) on one line: a break at its hyphen misleads."""
    return f'<span class="nw">{escape(name)}</span>'


def _n(value: object) -> _Number:
    return _Number(escape(str(value)))


def _cell(content: str | _Number) -> str:
    if isinstance(content, _Number):
        return f'<td class="n">{content.text}</td>'
    return f"<td>{content}</td>"


def _bar_chart(
    labels: Sequence[str],
    series: dict[str, list[int]],
    stacked: bool = False,
    colours: Sequence[str] = _COLOURS,
    *,
    x_title: str,
) -> str:
    """Horizontal bars, one row per label, as an inline SVG element. A series' colour is its
    place in ``series``, also when an earlier one is empty and left out: "not helpful" stays
    red when nothing was helpful."""
    colour_of = {name: colours[i % len(colours)] for i, name in enumerate(series)}
    series = {name: values for name, values in series.items() if any(values)}
    if not labels or not series:
        return ""
    wrapped = [_wrapped(label) for label in labels]
    lines = sum(label.count("\n") + 1 for label in wrapped)
    figure = Figure(figsize=(8, 0.3 * lines + 0.25 * len(labels) + 1.4), layout="constrained")
    axes = figure.add_subplot()
    rows = list(range(len(labels)))
    height = 0.8 if stacked else 0.8 / len(series)
    left = [0] * len(labels)
    for index, (name, values) in enumerate(series.items()):
        colour = colour_of[name]
        if stacked:
            axes.barh(rows, values, height, left=left, label=name, color=colour)
            left = [a + b for a, b in zip(left, values, strict=True)]
        else:
            offsets = [r - 0.4 + height * (index + 0.5) for r in rows]
            axes.barh(offsets, values, height, label=name, color=colour)
    # Labels are runbook titles and question words: a "$" pair would be read as math text
    # (and crash on a backslash matplotlib does not know), so they are drawn as plain text.
    axes.set_yticks(rows, wrapped, parse_math=False)
    axes.set_xlabel(x_title)
    axes.invert_yaxis()
    axes.xaxis.set_major_locator(MaxNLocator(integer=True))
    axes.spines[["top", "right"]].set_visible(False)
    if len(series) > 1:
        # Below the axes, not over the bars.
        figure.legend(loc="outside lower center", ncols=len(series), frameon=False)
    elif stacked:
        axes.set_title(next(iter(series)), loc="left", fontsize="medium")
    buffer = io.StringIO()
    figure.savefig(buffer, format="svg", metadata={"Date": None})  # same page, same bytes
    svg = buffer.getvalue()
    return svg[svg.index("<svg") :]


def _wrapped(label: str) -> str:
    """The whole label over as many lines as it needs."""
    return "\n".join(textwrap.wrap(label, _WRAP, break_long_words=True))
