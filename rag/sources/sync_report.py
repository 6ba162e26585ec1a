"""What one sync of a source reports (counts, skipped and failed items, its version), and the
state each item was left in for the next sync to compare against.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rag.ingest.report import IngestFailure, IngestSkip


@dataclass(frozen=True)
class ItemState:
    """An item as the last sync left it: its version and its document, or why it was skipped."""

    version: str
    document_id: str | None
    skipped: str | None = None


@dataclass
class SyncReport:
    tenant: str
    source: str
    version: str = ""
    added: int = 0
    changed: int = 0
    unchanged: int = 0
    retired: int = 0
    chunks_written: int = 0
    skipped: list[IngestSkip] = field(default_factory=list)
    failed: list[IngestFailure] = field(default_factory=list)
    seconds: float = 0.0

    def as_json(self) -> dict[str, Any]:
        return {
            "tenant": self.tenant,
            "source": self.source,
            "version": self.version,
            "documents": {
                "added": self.added,
                "changed": self.changed,
                "unchanged": self.unchanged,
                "retired": self.retired,
                "skipped": len(self.skipped),
                "failed": len(self.failed),
            },
            "chunks_written": self.chunks_written,
            "skipped": [{"path": s.path, "reason": s.reason} for s in self.skipped],
            "failures": [{"path": f.path, "reason": f.reason} for f in self.failed],
            "seconds": round(self.seconds, 3),
        }
