"""The rows the gap report reads for a tenant: answer facts, votes and current runbooks."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime


@dataclass(frozen=True)
class FactRow:
    answer_id: str
    created_at: datetime
    status: str
    topics: list[str]
    documents: list[str]
    versions: list[int]
    question: str | None  # None once retention has removed the answer
    service: str | None = None
    embedding: list[float] | None = field(default=None, compare=False, repr=False)
    embedding_model: str | None = None
    cosines: list[float] = field(default_factory=list)
    in_thread: bool = False  # asked in a Slack thread, its answer posted there


@dataclass(frozen=True)
class VoteRow:
    answer_id: str
    value: str
    reason: str | None
    documents: list[str]


@dataclass(frozen=True)
class DocumentRow:
    document_id: str
    version: int
    title: str
    url: str | None
    owner: str | None
    updated: str | None
    service: str | None = None
