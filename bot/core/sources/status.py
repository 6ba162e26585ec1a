"""A source's state in words, for ``runbook source list`` and ``/runbook sources``."""

from __future__ import annotations

from rag import SourceRow


def describe_source(row: SourceRow) -> list[str]:
    """A source in a few lines: what it reads, its last sync and what that sync did."""
    where = row.settings.get("url") or row.settings.get("base_url")
    scope = row.settings.get("branch") or row.settings.get("space")
    lines = [f"{row.tenant_id}/{row.name}  {row.kind}  {where}  ({scope})"]
    if row.kind == "git":
        synced = row.last_version[:12] if row.last_version else "none yet"
        lines.append(f"  path {row.settings.get('path') or '/'}  synced commit {synced}")
    if row.last_sync_at is None:
        lines.append("  never synced")
        return lines
    when = row.last_sync_at.strftime("%Y-%m-%d %H:%M UTC")
    if row.last_outcome == "failed":
        lines.append(
            f"  last sync {when}: FAILED ({row.consecutive_failures} in a row): {row.last_error}"
        )
    report = row.last_report or {}
    counts = report.get("documents", {})
    if counts:
        lines.append(
            f"  {'last good sync' if row.last_outcome == 'failed' else 'last sync ' + when}: "
            f"{counts.get('added', 0)} added, {counts.get('changed', 0)} changed, "
            f"{counts.get('unchanged', 0)} unchanged, {counts.get('retired', 0)} retired, "
            f"{counts.get('skipped', 0)} skipped, {counts.get('failed', 0)} failed"
        )
        lines.extend(f"    skipped {s['path']}: {s['reason']}" for s in report.get("skipped", []))
        lines.extend(f"    failed {f['path']}: {f['reason']}" for f in report.get("failures", []))
    return lines
