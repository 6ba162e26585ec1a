"""Why an answer did not help: the reason behind a 👎, stored on the voter's one vote.

One vote per user per answer (the ``feedback`` key); giving a reason makes it a 👎 and replaces
any earlier reason, so a changed mind is one row, not two.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from rag import Store

# Stored code → what the form and the reports call it.
REASONS: dict[str, str] = {
    "wrong_runbook": "Wrong runbook",
    "outdated": "Outdated",
    "missing_steps": "Missing steps",
    "unclear": "Unclear",
    "other": "Other",
}
COMMENT_MAX = 1000

_RECORD = """
INSERT INTO feedback (tenant_id, answer_id, user_id, value, reason, comment, documents)
SELECT tenant_id, answer_id, %(user_id)s, 'down', %(reason)s, %(comment)s, %(documents)s
FROM answers WHERE tenant_id = %(tenant)s AND answer_id = %(answer_id)s
ON CONFLICT (tenant_id, answer_id, user_id) DO UPDATE
    SET value = 'down', reason = excluded.reason, comment = excluded.comment,
        documents = excluded.documents, at = now()
RETURNING 1
"""


def reason_label(code: str | None) -> str:
    return REASONS.get(code or "", "No reason given")


async def record_reason(
    store: Store,
    tenant: str,
    answer_id: str,
    user_id: str,
    *,
    reason: str,
    comment: str | None,
    documents: Sequence[str],
) -> bool:
    """Store the voter's 👎 with its reason; False when the answer is gone (or the id is bad)."""
    if reason not in REASONS:
        raise ValueError(f"unknown feedback reason {reason!r}")
    try:
        key = uuid.UUID(answer_id)
    except ValueError:
        return False
    params = {
        "tenant": tenant,
        "answer_id": key,
        "user_id": user_id,
        "reason": reason,
        "comment": (comment or "").strip()[:COMMENT_MAX] or None,
        "documents": list(documents),
    }
    async with store.pool.connection() as conn:
        cur = await conn.execute(_RECORD, params)
        return await cur.fetchone() is not None
