"""Plain-text renderings for the terminal (Slack has its own, in ``bot/blocks``)."""

from __future__ import annotations

import textwrap

from rag.answering.answers import AskResult, Citation
from rag.ingest.pipeline import IngestReport
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
    """The answer with each source once, or for an abstention what to do next (ask
    ``default_owner``, the tenant's fallback owner when one is set, or ask in other words)."""
    scope = f"{result.tenant}" + (f" / service {result.service}" if result.service else "")
    lines = [f"[{result.status}{' · ' + result.reason_code if result.reason_code else ''}] {scope}"]
    if result.status == "answered":
        lines += ["", result.answer, "", "Sources:"]
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
        lines += ["", "No runbook answers this question.", _next_step(result.tenant, default_owner)]
    elif result.answer:
        lines.append(result.answer)
    # An abstention's nearest runbooks did not answer: listing them would read as evidence.
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


def _next_step(tenant: str, default_owner: str | None) -> str:
    if default_owner:
        who = f"ask {default_owner} (the {tenant} runbooks' default owner)"
    else:
        who = (
            "ask the team that owns the system (`runbook owner default "
            f"{tenant} TARGET` names someone here)"
        )
    return f"Next: {who}, or ask again in other words (`/runbook …` in Slack)."


def _section(heading_path: tuple[str, ...]) -> str:
    return " › ".join(heading_path[1:] or heading_path) or "(top)"
