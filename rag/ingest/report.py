"""What an ingest was told (limits) and what it reports: counts, failures and skipped paths."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class IngestLimits:
    max_file_bytes: int
    chunk_max_chars: int
    chunk_overlap_chars: int
    # Chunks per embed call: the embedder sorts each call's texts by length, so a larger group
    # pads less (GitLab runbooks: 7 % padded tokens at 128, 4 % at 256, 2.5 % at 512), but the
    # progress bar moves only when a group is written; the next group embeds meanwhile.
    embed_group_chunks: int = 256
    # Items (files, pages) a source sync reads, parses, embeds and writes at a time, and the
    # bytes (files, page bodies) that end a batch sooner: its memory holds a batch or two of
    # page bodies and runbooks, not the whole space (see rag/sources/sync.py).
    sync_batch_items: int = 50
    sync_batch_bytes: int = 4_000_000
    # Tenants whose size crosses this (see rag/store/partitions.py) are named in the report; None:
    # off.
    partition_min_chunks: int | None = None
    # A tenant partition gets its HNSW graph once its tenant has more chunks than this (smaller
    # ones are scanned exactly, so a graph would only cost memory); see Store.ensure_vector_index.
    exact_search_max_chunks: int = 20_000


@dataclass(frozen=True)
class IngestFailure:
    """A file (or folder) that should have been ingested and could not be: exit status 1."""

    path: str
    reason: str


@dataclass(frozen=True)
class IngestSkip:
    """A path that is deliberately not ingested (empty file, section page, symbolic link)."""

    path: str
    reason: str


@dataclass
class IngestReport:
    tenants: list[str] = field(default_factory=list)
    added: int = 0
    changed: int = 0
    unchanged: int = 0
    superseded: int = 0
    removed: int = 0
    chunks_written: int = 0
    failed: list[IngestFailure] = field(default_factory=list)
    skipped: list[IngestSkip] = field(default_factory=list)
    seconds: float = 0.0
    embed_seconds: float = 0.0
    # Tenants that crossed the partition threshold: `runbook db rebalance` would move them.
    rebalance_due: list[str] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        return {
            "tenants": self.tenants,
            "documents": {
                "added": self.added,
                "changed": self.changed,
                "unchanged": self.unchanged,
                "superseded": self.superseded,
                "removed": self.removed,
                "failed": len(self.failed),
                "skipped": len(self.skipped),
            },
            "chunks_written": self.chunks_written,
            "failures": [{"path": f.path, "reason": f.reason} for f in self.failed],
            "skipped": [{"path": s.path, "reason": s.reason} for s in self.skipped],
            "seconds": round(self.seconds, 3),
            "embed_seconds": round(self.embed_seconds, 3),
            "rebalance_due": self.rebalance_due,
        }
