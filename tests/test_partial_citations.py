"""A claim whose citation fails verification never reaches the answer (issue 10, must-fix 2).

The answerer here is a real implementation of the ``Answerer`` seam that replays scripted drafts
built from the excerpts it is given, and records the corrections it receives.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from rag import (
    Draft,
    DraftCitation,
    FastEmbedder,
    RagService,
    Settings,
    Store,
    ingest_limits,
    ingest_path,
)
from rag.retrieval.evidence import Excerpt

RUNBOOK = """# Payments gateway failover

## Mitigation
If HarborPay is degraded, move card traffic to Kestrel with the payments failover switch.
The change takes effect within 15 seconds and needs no restart of the gateway pods.
"""
QUESTION = "How do I move card traffic to Kestrel when HarborPay is degraded?"
DANGEROUS = "Then run `DROP TABLE payments` on the primary."

Script = Callable[[Sequence[Excerpt]], Draft]


def closing_words(excerpts: Sequence[Excerpt], count: int = 8) -> str:
    return " ".join(excerpts[0].evidence.content.split()[-count:])


def partly_verified(excerpts: Sequence[Excerpt]) -> Draft:
    """One verified claim, and one whose quote is not in the excerpt it names."""
    return Draft(
        status="answered",
        text=f"Move card traffic to Kestrel. [1] {DANGEROUS} [2]",
        citations=(
            DraftCitation(1, closing_words(excerpts)),
            DraftCitation(2, "run DROP TABLE payments on the primary"),
        ),
        provider="scripted",
    )


def nothing_verified(excerpts: Sequence[Excerpt]) -> Draft:
    return Draft(
        status="answered",
        text=f"{DANGEROUS} [1]",
        citations=(DraftCitation(1, "run DROP TABLE payments on the primary"),),
        provider="scripted",
    )


def corrected(excerpts: Sequence[Excerpt]) -> Draft:
    return Draft(
        status="answered",
        text="Move card traffic to Kestrel; it takes effect within 15 seconds. [1]",
        citations=(DraftCitation(1, closing_words(excerpts)),),
        provider="scripted",
    )


class ScriptedAnswerer:
    name = "scripted"

    def __init__(self, *scripts: Script) -> None:
        self.scripts = list(scripts)
        self.corrections: list[str | None] = []

    async def answer(
        self, question: str, excerpts: Sequence[Excerpt], *, correction: str | None = None
    ) -> Draft:
        self.corrections.append(correction)
        return self.scripts.pop(0)(excerpts)

    async def aclose(self) -> None:
        """Nothing to release."""


async def ask_with(
    answerer: ScriptedAnswerer,
    store: Store,
    embedder: FastEmbedder,
    settings: Settings,
    tenant: str,
    root: Path,
) -> tuple[str, str, str | None]:
    (root / "payments.md").write_text(RUNBOOK, encoding="utf-8")
    await ingest_path(
        store, embedder, root, tenant=tenant, prune=False, limits=ingest_limits(settings)
    )
    service = RagService(store=store, embedder=embedder, answerer=answerer, settings=settings)
    result = await service.ask(tenant, QUESTION)
    return result.status, result.answer, result.reason_code


async def test_a_sentence_whose_citation_failed_is_removed_after_one_retry(
    store: Store, embedder: FastEmbedder, settings: Settings, unique_tenant: str, tmp_path: Path
) -> None:
    answerer = ScriptedAnswerer(partly_verified, partly_verified)

    status, answer, _ = await ask_with(answerer, store, embedder, settings, unique_tenant, tmp_path)

    assert "DROP TABLE" not in answer
    assert (status, answer) == ("answered", "Move card traffic to Kestrel. [1]")
    # One corrective retry ran, naming the failed citation.
    assert len(answerer.corrections) == 2 and answerer.corrections[0] is None
    assert "[2]" in (answerer.corrections[1] or "")


async def test_a_retry_that_fixes_the_draft_is_the_answer(
    store: Store, embedder: FastEmbedder, settings: Settings, unique_tenant: str, tmp_path: Path
) -> None:
    answerer = ScriptedAnswerer(partly_verified, corrected)

    status, answer, _ = await ask_with(answerer, store, embedder, settings, unique_tenant, tmp_path)

    assert status == "answered"
    assert answer == "Move card traffic to Kestrel; it takes effect within 15 seconds. [1]"


async def test_nothing_verified_after_the_retry_abstains(
    store: Store, embedder: FastEmbedder, settings: Settings, unique_tenant: str, tmp_path: Path
) -> None:
    answerer = ScriptedAnswerer(partly_verified, nothing_verified)

    status, answer, reason = await ask_with(
        answerer, store, embedder, settings, unique_tenant, tmp_path
    )

    assert (status, reason, answer) == ("abstained", "unverifiable_citations", "")
