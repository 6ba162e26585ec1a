"""Who may open a runbook pull request from a thread: the tenant's admins (``bot.core.admin``:
the workspace's admins and owners, the installer, the people and user groups an admin added)
and runbook owners, or anyone when ``RUNBOOK_DRAFT_PR_ANYONE=true``."""

from __future__ import annotations

from rag import Store

REFUSED = (
    "Only a workspace admin, a runbook-bot admin or a runbook owner may open a runbook "
    "pull request "
    "(an admin can allow everyone with RUNBOOK_DRAFT_PR_ANYONE=true)."
)
HIDDEN_CHANNEL = (
    "That thread is in a channel you are not a member of, so it cannot be drafted for you."
)

_OWNS = """
SELECT EXISTS (SELECT 1 FROM owner_targets WHERE tenant_id = %(tenant)s AND target = %(user)s)
    OR EXISTS (SELECT 1 FROM documents WHERE tenant_id = %(tenant)s AND NOT superseded
               AND owner IN (%(user)s, %(mention)s))
"""


async def is_runbook_owner(store: Store, tenant: str, user_id: str) -> bool:
    """The user is a target of ``runbook owner map`` or a runbook's frontmatter owner."""
    async with store.pool.connection() as conn:
        cur = await conn.execute(
            _OWNS, {"tenant": tenant, "user": user_id, "mention": f"<@{user_id}>"}
        )
        row = await cur.fetchone()
    return bool(row and row[0])


async def may_open_pull_request(
    store: Store, tenant: str, user_id: str, *, admin: bool, anyone: bool
) -> bool:
    return anyone or admin or await is_runbook_owner(store, tenant, user_id)
