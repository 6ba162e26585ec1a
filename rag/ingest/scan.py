"""One tenant folder read against what is stored: what changed, what failed, what was skipped."""

from __future__ import annotations

from dataclasses import dataclass, field

from rag.errors import IngestFileError, IngestFileSkipped
from rag.formats.markdown import PARSE_REVISION
from rag.ingest.files import (
    SourceFile,
    TenantFolder,
    content_sha256,
    parse_source,
    read_runbook_file,
    scan_folder,
)
from rag.ingest.report import IngestFailure, IngestLimits, IngestSkip
from rag.store.connection import Store

_CURRENT_STATE = """
SELECT DISTINCT ON (document_id)
       document_id, version, sha256, embedding_model, superseded, source_path, parse_revision,
       superseded_by
FROM documents WHERE tenant_id = %(tenant)s
ORDER BY document_id, version DESC
"""


@dataclass(frozen=True)
class StoredVersion:
    version: int
    sha256: str
    embedding_model: str
    superseded: bool
    source_path: str
    parse_revision: int
    # Set when the runbook retired itself (its frontmatter's ``superseded_by``); a superseded
    # latest version without it was retired from outside (a prune, a removed source).
    superseded_by: str | None = None


@dataclass
class TenantScan:
    """What the folder holds now; ``kept_paths`` and ``kept_folders`` guard documents from prune.

    A file that failed to read keeps its document (a broken edit must not delete a runbook), and
    so does every file under a folder that could not be listed.
    """

    files: int = 0
    unchanged: int = 0
    changed: list[SourceFile] = field(default_factory=list)
    # Same bytes and model, but stored by an older parser: their heading paths are brought up to
    # date in place (``rag.ingest.relabel``), after which they count as unchanged.
    relabel: list[SourceFile] = field(default_factory=list)
    failed: list[IngestFailure] = field(default_factory=list)
    skipped: list[IngestSkip] = field(default_factory=list)
    seen_ids: set[str] = field(default_factory=set)
    kept_paths: set[str] = field(default_factory=set)
    kept_folders: set[str] = field(default_factory=set)

    def keeps(self, document_id: str, source_path: str) -> bool:
        """Whether prune must leave this stored document alone."""
        return (
            document_id in self.seen_ids
            or source_path in self.kept_paths
            or any(source_path.startswith(folder) for folder in self.kept_folders)
        )


async def load_stored_state(store: Store, tenant: str) -> dict[str, StoredVersion]:
    """Each document's latest version, current or retired."""
    async with store.pool.connection() as conn:
        cur = await conn.execute(_CURRENT_STATE, {"tenant": tenant})
        rows = await cur.fetchall()
    return {row[0]: StoredVersion(*row[1:]) for row in rows}


def scan_tenant(
    folder: TenantFolder, stored: dict[str, StoredVersion], model_id: str, limits: IngestLimits
) -> TenantScan:
    """Read and hash every file; parse only those whose bytes changed (runs in a thread)."""
    scan = TenantScan()
    listing = scan_folder(folder.root)
    scan.skipped.extend(IngestSkip(str(s.path), s.reason) for s in listing.skipped)
    for unreadable in listing.unreadable:
        scan.failed.append(IngestFailure(str(unreadable.path), unreadable.reason))
        scan.kept_folders.add(unreadable.path.relative_to(folder.root).as_posix() + "/")
    current_by_path = {
        v.source_path: (document_id, v) for document_id, v in stored.items() if not v.superseded
    }
    owners: dict[str, str] = {}
    for path in listing.files:
        scan.files += 1
        relative = path.relative_to(folder.root).as_posix()
        try:
            raw, text = read_runbook_file(folder.root, path, max_bytes=limits.max_file_bytes)
            known = current_by_path.get(relative)
            if (
                known is not None
                and known[1].sha256 == content_sha256(raw)
                and known[1].embedding_model == model_id
                and known[1].parse_revision == PARSE_REVISION
                and known[0] not in owners
            ):
                # Fast path: same bytes at the same path as the current version; no parse.
                owners[known[0]] = relative
                scan.seen_ids.add(known[0])
                scan.unchanged += 1
                continue
            source = parse_source(folder.root, path, raw, text)
            if source.document_id in owners:
                raise IngestFileError(
                    path,
                    f"document id {source.document_id!r} is also used by "
                    f"{owners[source.document_id]}",
                )
        except IngestFileSkipped as exc:
            scan.skipped.append(IngestSkip(str(exc.path), exc.reason))
            continue
        except IngestFileError as exc:
            scan.failed.append(IngestFailure(str(exc.path), exc.reason))
            scan.kept_paths.add(relative)
            continue
        owners[source.document_id] = relative
        scan.seen_ids.add(source.document_id)
        previous = stored.get(source.document_id)
        retired = source.runbook.frontmatter.superseded_by is not None
        if (
            previous is not None
            and previous.sha256 == source.sha256
            and previous.embedding_model == model_id
            and previous.superseded == retired
        ):
            if previous.parse_revision == PARSE_REVISION:
                scan.unchanged += 1
            else:
                scan.relabel.append(source)
        else:
            scan.changed.append(source)
    return scan
