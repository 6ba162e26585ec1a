"""The gap report as one self-contained HTML page: matplotlib charts inlined as SVG, a table per
section, no script, font or image fetched from anywhere (glyphs are drawn as SVG paths). Words,
not emoji: a machine without an emoji font would show empty boxes.

Rendering is CPU work: call ``render_gap_html`` off the event loop.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from bot.core.feedback_reasons import REASONS, reason_label
from bot.core.gaps import GapReport

_COLOURS = ("#4C72B0", "#DD8452", "#55A868", "#C44E52", "#8172B3", "#937860")
_MAX_BARS = 15
_STYLE = """
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:2rem auto;max-width:60rem;
color:#1d1c1d;padding:0 1rem}
h1{font-size:1.6rem}h2{margin-top:2.5rem;border-bottom:1px solid #ddd;padding-bottom:.3rem}
table{border-collapse:collapse;width:100%;margin-top:1rem;font-size:.9rem}
th,td{border:1px solid #ddd;padding:.35rem .5rem;text-align:left;vertical-align:top}
th{background:#f4f4f4}td.n{text-align:right}.muted{color:#666}
.totals span{display:inline-block;margin-right:1.5rem}
figure{margin:1rem 0}svg{max-width:100%;height:auto}
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
        f'<p class="muted">Since {escape(report.since)} · generated '
        f"{escape(report.generated_at)} · stale after {report.stale_after_days} days</p>"
        f'<p class="totals">{totals}</p>{"".join(sections)}</body></html>\n'
    )


def _gaps_section(report: GapReport) -> str:
    gaps = report.gaps[:_MAX_BARS]
    chart = _bar_chart(
        [f"{g.label} ({g.kind})" for g in gaps], {"unanswered": [g.count for g in gaps]}
    )
    rows: list[list[str | _Number]] = [
        [
            escape(g.label),
            escape(g.kind),
            _n(g.count),
            "<br>".join(escape(e) for e in g.examples)
            or '<span class="muted">(text expired)</span>',
            escape(", ".join(g.nearest_runbooks)),
            escape(g.last_asked[:16].replace("T", " ")),
        ]
        for g in report.gaps
    ]
    head = ["Topic", "Kind", "Questions", "Examples", "Nearest runbooks", "Last asked"]
    return _section("Unanswered questions by topic", chart if gaps else "", head, rows)


def _downvoted_section(report: GapReport) -> str:
    shown = report.downvoted[:_MAX_BARS]
    series = {
        reason_label(code): [r.reasons.get(code, 0) for r in shown] for code in (*REASONS, "none")
    }
    series = {label: values for label, values in series.items() if any(values)}
    chart = _bar_chart([r.title for r in shown], series, stacked=True)
    rows: list[list[str | _Number]] = [
        [
            escape(r.title),
            escape(r.document_id),
            _n(r.down),
            escape(", ".join(f"{reason_label(k)}: {v}" for k, v in r.reasons.items())),
        ]
        for r in report.downvoted
    ]
    head = ["Runbook", "Document", "Not helpful", "Reasons"]
    return _section("Runbooks by not-helpful votes and reason", chart if shown else "", head, rows)


def _stale_section(report: GapReport) -> str:
    shown = report.stale[:_MAX_BARS]
    chart = _bar_chart(
        [f"{r.title} ({r.age_days} d)" for r in shown], {"answers": [r.answers for r in shown]}
    )
    rows: list[list[str | _Number]] = [
        [
            escape(r.title),
            escape(r.document_id),
            escape(r.updated or ""),
            _n(r.age_days),
            _n(r.answers),
        ]
        for r in report.stale
    ]
    head = ["Runbook", "Document", "Updated", "Age (days)", "Answers"]
    return _section("Stale runbooks behind the most answers", chart if shown else "", head, rows)


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
    )
    rows: list[list[str | _Number]] = [
        [
            escape(r.title),
            escape(r.document_id),
            _n(r.answered),
            _n(r.up),
            _n(r.down),
            _n("–" if r.helpful_share is None else f"{r.helpful_share:.0%}"),
        ]
        for r in report.runbooks
    ]
    head = ["Runbook", "Document", "Answered", "Helpful", "Not helpful", "Helpful share"]
    return _section(
        "Answered, helpful and not helpful per runbook", chart if shown else "", head, rows
    )


def _section(
    title: str, chart: str, head: Sequence[str], rows: Sequence[Sequence[str | _Number]]
) -> str:
    if not rows:
        return f'<h2>{title}</h2><p class="muted">Nothing in this period.</p>'
    header = "".join(f"<th>{escape(h)}</th>" for h in head)
    body = "".join("<tr>" + "".join(_cell(c) for c in row) + "</tr>" for row in rows)
    figure = f"<figure>{chart}</figure>" if chart else ""
    return f"<h2>{title}</h2>{figure}<table><tr>{header}</tr>{body}</table>"


@dataclass(frozen=True)
class _Number:
    """A right-aligned table cell."""

    text: str


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
) -> str:
    """Horizontal bars, one row per label, as an inline SVG element."""
    if not labels or not series:
        return ""
    figure = Figure(figsize=(8, 0.45 * len(labels) + 1.2), layout="constrained")
    axes = figure.add_subplot()
    rows = list(range(len(labels)))
    height = 0.8 if stacked else 0.8 / len(series)
    left = [0] * len(labels)
    for index, (name, values) in enumerate(series.items()):
        colour = colours[index % len(colours)]
        if stacked:
            axes.barh(rows, values, height, left=left, label=name, color=colour)
            left = [a + b for a, b in zip(left, values, strict=True)]
        else:
            offsets = [r - 0.4 + height * (index + 0.5) for r in rows]
            axes.barh(offsets, values, height, label=name, color=colour)
    # Labels are runbook titles and question words: a "$" pair would be read as math text
    # (and crash on a backslash matplotlib does not know), so they are drawn as plain text.
    axes.set_yticks(rows, [_short(label) for label in labels], parse_math=False)
    axes.invert_yaxis()
    axes.xaxis.set_major_locator(MaxNLocator(integer=True))
    axes.spines[["top", "right"]].set_visible(False)
    if len(series) > 1:
        axes.legend(loc="lower right", frameon=False)
    buffer = io.StringIO()
    figure.savefig(buffer, format="svg")
    svg = buffer.getvalue()
    return svg[svg.index("<svg") :]


def _short(label: str, limit: int = 48) -> str:
    return label if len(label) <= limit else label[: limit - 1] + "…"
