"""How old each runbook is: frontmatter ``updated``, else its last git commit, else its mtime.

Resolved once per document version at ingest time and stored as ``documents.updated``
(``YYYY-MM-DD``) with ``documents.updated_source``, so every citation can say "updated N days
ago" without touching the files again.
"""

from __future__ import annotations

import asyncio
import logging
import subprocess
from collections.abc import Iterable, Sequence
from datetime import UTC, date, datetime
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # annotations only: rag.answering.answers imports the date helpers early
    from rag.ingest.files import TenantFolder
    from rag.store.connection import Store

logger = logging.getLogger(__name__)

GIT_TIMEOUT_S = 60.0

_UNDATED = """
SELECT document_id, source_path, updated FROM documents
WHERE tenant_id = %(tenant)s AND NOT superseded AND updated_source IS NULL
"""

_SET_UPDATED = """
UPDATE documents SET updated = %(updated)s, updated_source = %(source)s
WHERE tenant_id = %(tenant)s AND document_id = %(document_id)s AND NOT superseded
"""


def parse_updated(value: str | None) -> date | None:
    """The date in a frontmatter ``updated`` value (``2026-03-01``, an ISO timestamp), if any."""
    if not value:
        return None
    text = value.strip()
    try:
        return date.fromisoformat(text[:10])
    except ValueError:
        return None


def age_in_days(updated: str | None, *, today: date | None = None) -> int | None:
    """Whole days since ``updated`` (never negative); None when it is not a date."""
    when = parse_updated(updated)
    if when is None:
        return None
    return max(0, ((today or datetime.now(UTC).date()) - when).days)


async def record_update_dates(store: Store, folders: Iterable[TenantFolder]) -> int:
    """Resolve the age of every current document that has none yet; returns how many."""
    resolved = 0
    for folder in folders:
        async with store.pool.connection() as conn:
            cur = await conn.execute(_UNDATED, {"tenant": folder.tenant})
            rows = await cur.fetchall()
        if not rows:
            continue
        found = await asyncio.to_thread(
            _resolve_dates, folder.root, [(doc, path, updated) for doc, path, updated in rows]
        )
        async with store.pool.connection() as conn, conn.transaction():
            async with conn.cursor() as cursor:
                await cursor.executemany(
                    _SET_UPDATED,
                    [
                        {"tenant": folder.tenant, "document_id": doc, "updated": day, "source": src}
                        for doc, (day, src) in found.items()
                    ],
                )
        resolved += len(found)
    return resolved


def _resolve_dates(
    root: Path, rows: Sequence[tuple[str, str, str | None]]
) -> dict[str, tuple[str, str]]:
    """document id → (YYYY-MM-DD, source); runs in a thread (git and stat calls block)."""
    found: dict[str, tuple[str, str]] = {}
    undated: list[tuple[str, str]] = []
    for document_id, source_path, updated in rows:
        day = parse_updated(updated)
        if day is not None:
            found[document_id] = (day.isoformat(), "frontmatter")
        else:
            undated.append((document_id, source_path))
    commits = last_commit_dates(root, [path for _, path in undated]) if undated else {}
    for document_id, source_path in undated:
        if source_path in commits:
            found[document_id] = (commits[source_path].isoformat(), "git")
            continue
        try:
            mtime = (root / source_path).stat().st_mtime
        except OSError:
            continue  # gone since the scan; the next ingest retires it
        found[document_id] = (datetime.fromtimestamp(mtime, UTC).date().isoformat(), "mtime")
    return found


def last_commit_dates(root: Path, paths: Sequence[str]) -> dict[str, date]:
    """Each path's last commit date, from one ``git log`` over the folder (not one per file).

    Empty when ``root`` is not inside a git checkout or git is missing.
    """
    wanted = set(paths)
    try:
        done = subprocess.run(
            [
                *("git", "-C", str(root), "-c", "core.quotePath=false", "log"),
                *("--format=%x00%ct", "--name-only", "--relative", "--no-renames", "--", "."),
            ],
            capture_output=True,
            text=True,
            timeout=GIT_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        logger.info("git dates unavailable for %s: %s", root, type(exc).__name__)
        return {}
    if done.returncode != 0:
        return {}
    found: dict[str, date] = {}
    commit_day: date | None = None
    # Newest commit first: the first time a path appears is its last change.
    for line in done.stdout.splitlines():
        if line.startswith("\x00"):
            commit_day = datetime.fromtimestamp(int(line[1:]), UTC).date()
        elif line and commit_day is not None and line in wanted and line not in found:
            found[line] = commit_day
            if len(found) == len(wanted):
                break
    return found
