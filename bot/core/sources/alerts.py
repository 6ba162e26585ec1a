"""A source that keeps failing is reported to its tenant's default owner, once per run of
failures (``runbook owner default TENANT TARGET``; the owners' loop's fallback target).

The report is claimed on the source row (``failure_reported_at``) before it is sent, so two
replicas never both send it; a successful sync clears the claim for the next run of failures.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Protocol

from bot.core.sources.runs import SyncOutcome
from rag import Store, claim_failure_report

logger = logging.getLogger(__name__)

FAILURES_BEFORE_REPORT = 3

_DEFAULT_OWNER = """
SELECT o.target, coalesce(w.enterprise_id, ''), coalesce(w.team_id, '')
FROM owner_targets AS o
LEFT JOIN LATERAL (SELECT enterprise_id, team_id FROM workspaces
                   WHERE tenant_id = o.tenant_id ORDER BY created_at LIMIT 1) AS w ON true
WHERE o.tenant_id = %(tenant)s AND o.name = ''
"""


@dataclass(frozen=True)
class SourceFailure:
    """What the owner is told: which source, how many syncs failed, the last error."""

    tenant: str
    source: str
    failures: int
    error: str
    target: str
    enterprise_id: str
    team_id: str


class SourceFailureMessenger(Protocol):
    async def send_source_failure(self, failure: SourceFailure) -> str:
        """Deliver it; returns ``"sent"`` or ``"failed:<error>"``."""
        ...


class SourceFailureReports:
    """The ``on_outcome`` of ``SourceSyncJob``: reports the third failure in a row."""

    def __init__(self, store: Store, messenger: SourceFailureMessenger) -> None:
        self._store = store
        self._messenger = messenger

    async def __call__(self, outcome: SyncOutcome) -> None:
        if outcome.synced or outcome.failures_in_row < FAILURES_BEFORE_REPORT:
            return
        row = outcome.source
        async with self._store.pool.connection() as conn:
            cur = await conn.execute(_DEFAULT_OWNER, {"tenant": row.tenant_id})
            owner = await cur.fetchone()
        if owner is None:
            logger.warning(
                "source %s of %s failed %d syncs in a row; no default owner to tell "
                "(runbook owner default)",
                row.name,
                row.tenant_id,
                outcome.failures_in_row,
            )
            return
        if not await claim_failure_report(self._store, row.source_id, after=FAILURES_BEFORE_REPORT):
            return  # told already for this run of failures
        result = await self._messenger.send_source_failure(
            SourceFailure(
                tenant=row.tenant_id,
                source=row.name,
                failures=outcome.failures_in_row,
                error=outcome.error or "",
                target=owner[0],
                enterprise_id=owner[1],
                team_id=owner[2],
            )
        )
        logger.info("failing source %s of %s reported: %s", row.name, row.tenant_id, result)
