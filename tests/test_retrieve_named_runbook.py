"""A runbook the question names by its alert brings its sections into the candidates even when
they share no word with the question ("MCCDrainError on worker-1, what do i do" and that
runbook's Mitigation, test row oc08): the named arm of the hybrid query. Its tenant wall is
tested with the rest of the query in tests/test_tenant_isolation.py."""

from __future__ import annotations

from pathlib import Path

from rag import Settings, Store, ingest_limits, ingest_path
from rag.retrieval.rank import ScopeHints
from rag.retrieval.retrieve import search
from tests.hash_embedder import HashEmbedder

EMBEDDER = HashEmbedder(dim=32)
NAMED = """# MCCDrainError

## Meaning

Alerts the user when the machine config controller fails to drain a node.

## Mitigation

Patch the pod disruption budget to zero, then patch it back once the upgrade completes.
"""
OTHER = "# Disk full\n\n## Mitigation\n\nWhat do I do on a worker when its disk is full? Prune.\n"


async def _found(store: Store, tenant: str, named: str | None) -> set[tuple[str, str]]:
    question = "MCCDrainError on worker-1 what do i do"
    found = await search(
        store,
        tenant=tenant,
        question=question,
        embedding=(await EMBEDDER.embed([question]))[0],
        model=EMBEDDER.model_id,
        service=None,
        candidates=1,
        hints=ScopeHints(alert_document=named),
        exact=True,
    )
    return {(e.document_id, e.heading_path[-1]) for e in found.evidence}


async def test_the_named_runbooks_sections_join_the_candidates_whatever_words_they_share(
    store: Store, settings: Settings, tmp_path: Path, unique_tenant: str
) -> None:
    (tmp_path / "MachineConfigControllerDrainError.md").write_text(NAMED, encoding="utf-8")
    (tmp_path / "disk-full.md").write_text(OTHER, encoding="utf-8")
    await ingest_path(
        store, EMBEDDER, tmp_path, tenant=unique_tenant, prune=False, limits=ingest_limits(settings)
    )
    named = "MachineConfigControllerDrainError"

    # One hit per half: the named runbook's Mitigation is not among them by its words.
    assert (named, "Mitigation") not in await _found(store, unique_tenant, None)

    with_name = await _found(store, unique_tenant, named)
    assert {(named, "Mitigation"), (named, "Meaning")} <= with_name
