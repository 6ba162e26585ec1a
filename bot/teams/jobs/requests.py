"""Teams work as queue jobs: what an accepted activity or invoke leaves for the worker.

A payload is plain JSON: the conversation reference (``model_dump`` by alias round-trips through
``ConversationReference.model_validate``), the question and where it came from. The worker needs
nothing from the request that carried it, so any replica can answer it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast

from microsoft_agents.activity import ConversationReference

from bot.core.answers.store import Entry

ANSWER = "teams.answer"
RETRY = "teams.retry"


@dataclass(frozen=True)
class AnswerRequest:
    """One question to answer into one conversation (a channel thread, a chat)."""

    reference: ConversationReference
    aad_tenant: str | None
    channel_id: str | None
    question: str
    hints: tuple[str, ...]
    entry: Entry

    def payload(self) -> dict[str, Any]:
        return {
            "reference": reference_json(self.reference),
            "aad_tenant": self.aad_tenant,
            "channel_id": self.channel_id,
            "question": self.question,
            "hints": list(self.hints),
            "entry": self.entry,
        }

    @classmethod
    def from_payload(cls, payload: dict[str, Any]) -> AnswerRequest:
        return cls(
            reference=reference_from(payload),
            aad_tenant=_text_or_none(payload.get("aad_tenant")),
            channel_id=_text_or_none(payload.get("channel_id")),
            question=str(payload.get("question") or ""),
            hints=tuple(str(hint) for hint in payload.get("hints") or ()),
            entry=cast(Entry, str(payload.get("entry") or "mention")),
        )


@dataclass(frozen=True)
class RetryRequest:
    """A stored answer to ask again; its card (``message_id``) is replaced for everyone."""

    reference: ConversationReference
    tenant: str
    answer_id: str
    message_id: str | None

    def payload(self) -> dict[str, Any]:
        return {
            "reference": reference_json(self.reference),
            "tenant": self.tenant,
            "answer_id": self.answer_id,
            "message_id": self.message_id,
        }

    @classmethod
    def from_payload(cls, payload: dict[str, Any]) -> RetryRequest:
        return cls(
            reference=reference_from(payload),
            tenant=str(payload["tenant"]),
            answer_id=str(payload["answer_id"]),
            message_id=_text_or_none(payload.get("message_id")),
        )


def reference_json(reference: ConversationReference) -> dict[str, Any]:
    return reference.model_dump(mode="json", by_alias=True, exclude_none=True)


def reference_from(payload: dict[str, Any]) -> ConversationReference:
    return ConversationReference.model_validate(payload["reference"])


def _text_or_none(value: object) -> str | None:
    return value if isinstance(value, str) and value else None
