"""Which runbooks a card names besides its answer's own, for every surface alike."""

from __future__ import annotations

from collections.abc import Iterable

from rag import AskResult, Evidence

# "Other runbooks" under the runbook panel: one line each.
OTHER_RUNBOOKS = 2


def nearest_documents(evidence: Iterable[Evidence], limit: int = 3) -> list[Evidence]:
    """The best-ranked chunk of each of the first ``limit`` distinct documents."""
    seen: dict[str, Evidence] = {}
    for item in evidence:
        seen.setdefault(item.document_id, item)
        if len(seen) == limit:
            break
    return list(seen.values())


def other_runbooks(result: AskResult) -> list[Evidence]:
    """The next documents after the one the answer's runbook panel shows."""
    named = result.runbook.document_id if result.runbook else None
    nearest = nearest_documents(result.evidence, OTHER_RUNBOOKS + 1)
    return [e for e in nearest if e.document_id != named][:OTHER_RUNBOOKS]
