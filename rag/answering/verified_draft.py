"""A draft written and verified: every citation checked against its excerpt, one corrective retry
when any is dropped, and what the answer then is — answered, abstained, or ungrounded.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from rag.answering.answers import Answerer, AskStatus, Citation, DroppedCitation
from rag.answering.reading_order import in_reading_order
from rag.answering.verify import verify_draft
from rag.retrieval.evidence import Excerpt


@dataclass(frozen=True)
class VerifiedDraft:
    """What verification left of the answerer's draft. ``ungrounded``: it answered without
    citing any excerpt, a provider failure rather than an abstention."""

    status: AskStatus
    reason: str | None
    provider: str
    answer: str = ""
    citations: tuple[Citation, ...] = ()
    dropped: tuple[DroppedCitation, ...] = ()
    usage: dict[str, int] = field(default_factory=dict)
    ungrounded: bool = False


async def draft_verified(
    answerer: Answerer, question: str, excerpts: Sequence[Excerpt]
) -> VerifiedDraft:
    draft = await answerer.answer(question, excerpts)
    verification = verify_draft(draft, excerpts)
    dropped = list(verification.dropped)
    input_tokens, output_tokens = draft.input_tokens, draft.output_tokens
    # Any dropped citation gets the one corrective retry, even when others survived.
    if draft.status == "answered" and (verification.dropped or not verification.ok):
        draft = await answerer.answer(
            question, excerpts, correction="\n".join(verification.problems)
        )
        verification = verify_draft(draft, excerpts)
        dropped.extend(verification.dropped)
        input_tokens += draft.input_tokens
        output_tokens += draft.output_tokens
    usage = {"input_tokens": input_tokens, "output_tokens": output_tokens}
    provider, lost = draft.provider, tuple(dropped)
    if draft.status == "not_in_sources":
        return VerifiedDraft("abstained", "not_in_sources", provider, dropped=lost, usage=usage)
    if not verification.ok:
        if not draft.citations:
            return VerifiedDraft(
                "error", None, provider, dropped=lost, usage=usage, ungrounded=True
            )
        reason = "unverifiable_citations"
        return VerifiedDraft("abstained", reason, provider, dropped=lost, usage=usage)
    answer, citations = in_reading_order(verification.text, verification.citations)
    return VerifiedDraft("answered", None, provider, answer, citations, dropped=lost, usage=usage)
