"""Section names a draft uses: the ones the tenant's own runbooks use most for each part."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from rag import Store

# Each part of a draft, and the headings runbooks give it (lower case).
_ROLES = {
    "symptoms": ("symptoms", "impact", "alert", "overview", "description", "meaning", "summary"),
    "diagnosis": ("diagnosis", "investigation", "triage", "troubleshooting", "checks", "debugging"),
    "mitigation": ("mitigation", "resolution", "remediation", "fix", "recovery", "actions"),
    "verification": ("verification", "validation", "verify", "confirm", "checks after"),
}

_SECTIONS = """
SELECT heading_path[2] AS heading, count(DISTINCT document_id) AS documents
FROM chunks
WHERE tenant_id = %(tenant)s AND NOT superseded AND cardinality(heading_path) >= 2
GROUP BY 1
"""


@dataclass(frozen=True)
class Headings:
    symptoms: str = "Symptoms"
    diagnosis: str = "Diagnosis"
    mitigation: str = "Mitigation"
    verification: str = "Verification"
    open_questions: str = "Open questions"


def choose_headings(counts: Counter[str]) -> Headings:
    """For each part, the most used heading (by documents) among the names that part goes
    by; the default where the tenant's runbooks use none of them."""
    chosen: dict[str, str] = {}
    for role, names in _ROLES.items():
        best = max(
            ((n, h) for h, n in counts.items() if h.strip().lower() in names),
            default=None,
            key=lambda item: (item[0], -names.index(item[1].strip().lower())),
        )
        if best is not None:
            chosen[role] = best[1].strip()
    return Headings(**chosen)


async def tenant_headings(store: Store, tenant: str) -> Headings:
    """``choose_headings`` over the second-level headings of the tenant's current runbooks."""
    async with store.pool.connection() as conn:
        cur = await conn.execute(_SECTIONS, {"tenant": tenant})
        rows = await cur.fetchall()
    return choose_headings(Counter({str(h): int(n) for h, n in rows if h}))
