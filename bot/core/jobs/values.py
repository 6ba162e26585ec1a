"""The queue's values: what intake asks for (``JobRequest`` of a ``JobTenant``), what a worker
claims (``Job``), and the queue's size (``QueueStats``)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

from bot.core.conversation import storable
from bot.core.statements import Statement


@dataclass(frozen=True)
class JobTenant:
    """Whose work a job is, as intake knows it without a query of its own: the tenant itself
    (a source's sync), or the Slack workspace or Teams organisation that the job's INSERT
    resolves to its tenant. Claims take turns by tenant (``next_job`` in migration 016)."""

    tenant_id: str | None = None
    slack_team_id: str | None = None
    slack_enterprise_id: str | None = None
    teams_aad_tenant: str | None = None


@dataclass(frozen=True)
class JobRequest:
    """Work a surface accepted: ``kind`` names its handler, ``payload`` is the handler's input."""

    kind: str
    dedupe_key: str
    payload: dict[str, Any]
    tenant: JobTenant = JobTenant()
    # Seconds from queueing until the job is given up; None: RUNBOOK_JOB_DEADLINE_S, the
    # deadline of an answer. A source sync, minutes of work, brings its own.
    deadline_s: float | None = None


@dataclass(frozen=True)
class Job:
    """A claimed job. ``attempts`` counts claims, this one included: above 1 it is a re-run,
    and whatever it posts may already be there."""

    job_id: uuid.UUID
    kind: str
    payload: dict[str, Any]
    attempts: int
    max_attempts: int
    age_s: float
    overdue: bool
    lease_token: uuid.UUID
    tenant_id: str | None
    answer_id: str | None
    # Until its deadline_at; None: RUNBOOK_JOB_DEADLINE_S from its age.
    remaining_s: float | None = None
    # Run again by the same claim after a database outage cut a run short: what that run
    # posted may be there, exactly as for a re-run after a crash.
    resumed: bool = False
    # Writes a run leaves to the job's settling (``JobQueue.finish`` or ``requeue``): sent
    # with it, in its transaction and round trip (e.g. where the answer's card was posted).
    pending: list[Statement] = field(default_factory=list, compare=False, repr=False)

    @property
    def tenant_key(self) -> str:
        """The tenant whose turn this job took ('' for a job no tenant was found for)."""
        return self.tenant_id or ""

    @property
    def rerun(self) -> bool:
        return self.attempts > 1 or self.resumed

    @property
    def exhausted(self) -> bool:
        return self.attempts > self.max_attempts


@dataclass(frozen=True)
class QueueStats:
    queued: int
    running: int
    dead: int
    oldest_age_s: float


def storable_json(value: Any) -> Any:
    """``value`` with every string storable in jsonb (no NUL, no lone surrogate)."""
    if isinstance(value, str):
        return storable(value)
    if isinstance(value, dict):
        return {storable(str(k)): storable_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [storable_json(item) for item in value]
    return value
