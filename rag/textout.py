"""Plain-text renderings for the terminal (Slack has its own, in ``bot/blocks``)."""

from __future__ import annotations

import textwrap

from rag.answering.answers import AskResult, Citation
from rag.answering.state_changes import CHANGES_STATE, answer_steps
from rag.ingest.report import IngestReport
from rag.retrieval.evidence import Evidence
from rag.store.partitions import RebalanceReport


def format_ingest_report(report: IngestReport) -> str:
    lines = [
        f"tenants: {', '.join(report.tenants)}",
        f"documents: {report.added} added, {report.changed} changed, {report.unchanged} unchanged, "
        f"{report.superseded} superseded, {report.removed} removed, {len(report.failed)} failed, "
        f"{len(report.skipped)} skipped",
        f"chunks written: {report.chunks_written} in {report.seconds:.2f}s "
        f"(embedding {report.embed_seconds:.2f}s)",
    ]
    lines += [f"  failed {failure.path}: {failure.reason}" for failure in report.failed]
    lines += [f"  skipped {skipped.path}: {skipped.reason}" for skipped in report.skipped]
    if report.rebalance_due:
        lines.append(
            f"crossed the partition threshold: {', '.join(report.rebalance_due)} "
            "(run `runbook db rebalance`)"
        )
    return "\n".join(lines)


def format_rebalance_report(report: RebalanceReport, *, min_chunks: int, dry_run: bool) -> str:
    verb = "would move" if dry_run else "moved"
    lines = [f"threshold: {min_chunks} current chunks (back to shared below {min_chunks / 2:g})"]
    lines += [f"{verb} to its own partition: {tenant}" for tenant in report.promoted]
    lines += [f"{verb} to the shared partitions: {tenant}" for tenant in report.demoted]
    lines.append(f"unchanged: {report.unchanged} tenants ({report.seconds:.2f}s)")
    return "\n".join(lines)


def format_ask_result(result: AskResult, *, default_owner: str | None = None) -> str:
    """The answer with each source once, or for an abstention what to do next: the closest
    runbooks and their owners when something came near, whom to ask (``default_owner``, the
    tenant's fallback owner, when one is set), and how to ask again."""
    scope = f"{result.tenant}" + (f" / service {result.service}" if result.service else "")
    lines = [f"[{result.status}{' · ' + result.reason_code if result.reason_code else ''}] {scope}"]
    if result.status == "answered":
        lines += ["", marked_answer(result.answer), "", "Sources:"]
        # Each source once, in order of first citation, with every quote taken from it.
        sources: dict[int, list[Citation]] = {}
        for citation in result.citations:
            sources.setdefault(citation.n, []).append(citation)
        for n, cited in sources.items():
            evidence = cited[0].evidence
            link = f" <{evidence.url}>" if evidence.url else ""
            lines.append(f"  [{n}] {evidence.title} › {_section(evidence.heading_path)}{link}")
            for quote in dict.fromkeys(c.quote for c in cited):
                lines += textwrap.wrap(
                    quote, 96, initial_indent="      > ", subsequent_indent="      > "
                )
    elif result.status == "abstained":
        lines += ["", "No runbook answers this question.", *_no_answer_steps(result, default_owner)]
    elif result.answer:
        lines.append(result.answer)
    # An abstention's nearest runbooks did not answer: they are listed above as such, never as
    # evidence.
    if result.evidence and result.status != "abstained":
        lines += ["", "Evidence (best first):"]
        for rank, e in enumerate(result.evidence[:5], start=1):
            lines.append(
                f"  {rank}. {e.document_id} › {_section(e.heading_path)}  cosine {e.cosine:.3f}  "
                f"{' '.join(e.hit_reasons)}"
            )
    timings = ", ".join(f"{k} {v:.0f} ms" for k, v in result.timings_ms.items())
    lines += ["", f"provider {result.provider}; {timings}"]
    return "\n".join(lines)


def marked_answer(answer: str) -> str:
    """The answer with "⚠️ changes state (what it does)" above each step whose command changes
    state, as the chat cards mark them."""
    parts: list[str] = []
    for step in answer_steps(answer):
        if step.changes:
            parts.append(f"{CHANGES_STATE} ({', '.join(step.changes)})")
        parts.append(step.text)
    return "\n".join(parts)


def _no_answer_steps(result: AskResult, default_owner: str | None) -> list[str]:
    """What an on-call does next: the closest runbooks and who owns them (when something was
    found, labelled as not answering), whom to ask, how to ask again."""
    lines: list[str] = []
    nearest = _nearest_documents(result) if result.reason_code in _SHOWS_NEAREST else []
    if nearest:
        lines.append("Closest runbooks (not close enough to answer from):")
        for evidence in nearest:
            owner = f" · owner {evidence.owner}" if evidence.owner else ""
            link = f" <{evidence.url}>" if evidence.url else ""
            lines.append(f"  - {evidence.title} ({evidence.document_id}){owner}{link}")
    owners = list(dict.fromkeys(e.owner for e in nearest if e.owner))
    asks = [f"{owners[0]} (owns the closest runbook)"] if owners else []
    if default_owner and default_owner not in owners:
        asks.append(f"{default_owner} (the {result.tenant} runbooks' default owner)")
    who = f"ask {' or '.join(asks)}" if asks else "page the team that owns the service"
    lines.append(
        f"Next: {who}, or ask again with the alert name or the service "
        '(e.g. "KubePodCrashLooping payments-api").'
    )
    return lines


# Reasons where something was retrieved: the near misses may still be worth opening (as on the
# chat cards); with ``no_evidence`` nothing came close.
_SHOWS_NEAREST = frozenset({"low_confidence", "not_in_sources", "unverifiable_citations"})
_NEAREST = 3


def _nearest_documents(result: AskResult) -> list[Evidence]:
    seen: dict[str, Evidence] = {}
    for evidence in result.evidence:
        seen.setdefault(evidence.document_id, evidence)
        if len(seen) == _NEAREST:
            break
    return list(seen.values())


def _section(heading_path: tuple[str, ...]) -> str:
    return " › ".join(heading_path[1:] or heading_path) or "(top)"
