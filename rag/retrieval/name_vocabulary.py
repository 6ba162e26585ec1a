"""Whether a tenant's runbooks ever use an alert's name, whatever its spelling.

Postgres's parser splits ``kube_pod_crash_looping`` and ``kube-pod-crash-looping`` into words
(kube, pod, crash, loop) that every Kubernetes tenant uses, so the question's own vocabulary
check never finds such a name unknown. Written as one word (``kubepodcrashlooping``) it stems
to the lexeme a runbook that spells ``KubePodCrashLooping`` holds; the tenant's term statistics
say whether any chunk does.
"""

from __future__ import annotations

from rag.retrieval.runbook_names import squash
from rag.store.connection import Store

_JOINED_NAME_DF = """
SELECT coalesce(max(s.df), 0)
FROM unnest(to_tsvector('english', %(name)s)) AS q
LEFT JOIN term_stats AS s ON s.tenant_id = %(tenant)s AND s.lexeme = q.lexeme
"""


async def uses_name(store: Store, tenant: str, name: str) -> bool:
    """Whether any of the tenant's chunks contains ``name`` written as one word."""
    async with store.tenant_reader(tenant) as conn:
        cur = await conn.execute(_JOINED_NAME_DF, {"tenant": tenant, "name": squash(name)})
        row = await cur.fetchone()
    return bool(row and row[0])
