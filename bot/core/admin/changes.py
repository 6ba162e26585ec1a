"""Every change a tenant's admins can make from a chat surface, each one checked and recorded:
the actor's authority is checked on the server first, then the value before is read, the change
made and the audit row written. A refusal changes nothing and says why.

Two admins changing the same setting at once: both changes are applied in turn (the last write
wins) and both are in the audit log with what each saw before.
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass
from typing import Any

from bot.core.admin.admins import Actor, PrincipalKind, delete_admin, insert_admin, is_admin
from bot.core.admin.audit import record_change
from bot.core.alerts.channel_settings import Switch
from bot.core.owners.runbook_owners import DEFAULT_NAME, surface_of, validate_target
from rag import ConfigurationError, SourceRow, Store, get_source

logger = logging.getLogger(__name__)

NOT_ADMIN = (
    "Only this workspace's admins can change the bot's settings. Ask a workspace admin, or the "
    "person who installed the bot, to add you."
)


@dataclass(frozen=True)
class Outcome:
    """What a change did: ``changed`` False with a ``message`` saying why nothing changed."""

    changed: bool
    message: str
    source_id: str | None = None  # a source the change added


def refused(message: str) -> Outcome:
    return Outcome(False, message)


class SettingsChanges:
    def __init__(self, store: Store) -> None:
        self._store = store

    async def may_change(self, tenant: str, actor: Actor) -> bool:
        return await is_admin(self._store, tenant, actor)

    async def set_channel_switch(
        self, tenant: str, actor: Actor, team_id: str, channel_id: str, switch: Switch, on: bool
    ) -> Outcome:
        if not await self.may_change(tenant, actor):
            return refused(NOT_ADMIN)
        column = "alerts" if switch == "alerts" else "follow_ups"
        params = {"tenant": tenant, "team": team_id, "channel": channel_id, "on": on}
        async with self._store.pool.connection() as conn, conn.transaction():
            await _serialise(conn, tenant, f"channel:{team_id}:{channel_id}")
            cur = await conn.execute(
                "SELECT alerts, follow_ups FROM channel_settings WHERE tenant_id = %(tenant)s "
                "AND team_id = %(team)s AND channel_id = %(channel)s FOR UPDATE",
                params,
            )
            row = await cur.fetchone()
            before = False if row is None else bool(row[0] if switch == "alerts" else row[1])
            await conn.execute(
                _SET_SWITCH[column],
                params,
            )
            if switch == "alerts" and on:
                await conn.execute(
                    "DELETE FROM muted_alerts WHERE tenant_id = %(tenant)s "
                    "AND team_id = %(team)s AND channel_id = %(channel)s",
                    params,
                )
            await self._audit(conn, tenant, actor, f"channel.{column}", channel_id, before, on)
        word = "alert answers" if switch == "alerts" else "thread follow-ups"
        return Outcome(True, f"{word} {'on' if on else 'off'} in <#{channel_id}>")

    async def set_channel_service(
        self, tenant: str, actor: Actor, team_id: str, channel_id: str, service: str | None
    ) -> Outcome:
        if not await self.may_change(tenant, actor):
            return refused(NOT_ADMIN)
        params = {"tenant": tenant, "team": team_id, "channel": channel_id, "service": service}
        async with self._store.pool.connection() as conn, conn.transaction():
            await _serialise(conn, tenant, f"service:{team_id}:{channel_id}")
            cur = await conn.execute(
                "SELECT service FROM channel_scopes WHERE tenant_id = %(tenant)s "
                "AND team_id = %(team)s AND channel_id = %(channel)s FOR UPDATE",
                params,
            )
            row = await cur.fetchone()
            before = None if row is None else str(row[0])
            if service:
                await conn.execute(
                    "INSERT INTO channel_scopes (tenant_id, team_id, channel_id, service) "
                    "VALUES (%(tenant)s, %(team)s, %(channel)s, %(service)s) "
                    "ON CONFLICT (tenant_id, team_id, channel_id) "
                    "DO UPDATE SET service = excluded.service",
                    params,
                )
            else:
                await conn.execute(
                    "DELETE FROM channel_scopes WHERE tenant_id = %(tenant)s "
                    "AND team_id = %(team)s AND channel_id = %(channel)s",
                    params,
                )
            await self._audit(conn, tenant, actor, "channel.service", channel_id, before, service)
        return Outcome(True, f"<#{channel_id}> prefers {service or 'every service'}")

    async def set_default_owner(self, tenant: str, actor: Actor, target: str | None) -> Outcome:
        if not await self.may_change(tenant, actor):
            return refused(NOT_ADMIN)
        if target is not None:
            try:
                validate_target(target)
            except ConfigurationError as exc:
                return refused(str(exc))
            if surface_of(target) != actor.surface:
                return refused(f"{target} is not a {actor.surface} person, group or channel")
        params = {"tenant": tenant, "name": DEFAULT_NAME, "surface": actor.surface}
        async with self._store.pool.connection() as conn, conn.transaction():
            await _serialise(conn, tenant, f"owner:{actor.surface}")
            cur = await conn.execute(
                "SELECT target FROM owner_targets WHERE tenant_id = %(tenant)s "
                "AND name = %(name)s AND surface = %(surface)s FOR UPDATE",
                params,
            )
            row = await cur.fetchone()
            before = None if row is None else str(row[0])
            if target:
                await conn.execute(
                    "INSERT INTO owner_targets (tenant_id, name, surface, target) "
                    "VALUES (%(tenant)s, %(name)s, %(surface)s, %(target)s) "
                    "ON CONFLICT (tenant_id, name, surface) DO UPDATE SET target = excluded.target",
                    {**params, "target": target},
                )
            else:
                await conn.execute(
                    "DELETE FROM owner_targets WHERE tenant_id = %(tenant)s "
                    "AND name = %(name)s AND surface = %(surface)s",
                    params,
                )
            await self._audit(conn, tenant, actor, "owner.default", "", before, target)
        return Outcome(True, f"default owner: {target or 'none'}")

    async def add_admin(
        self, tenant: str, actor: Actor, principal: str, kind: PrincipalKind
    ) -> Outcome:
        if not await self.may_change(tenant, actor):
            return refused(NOT_ADMIN)
        async with self._store.pool.connection() as conn, conn.transaction():
            added = await insert_admin(conn, tenant, actor.surface, principal, kind, actor.user_id)
            if added:
                await self._audit(conn, tenant, actor, "admin.added", principal, None, kind)
        return Outcome(added, f"{principal} can change settings" + ("" if added else " already"))

    async def remove_admin(self, tenant: str, actor: Actor, principal: str) -> Outcome:
        if not await self.may_change(tenant, actor):
            return refused(NOT_ADMIN)
        async with self._store.pool.connection() as conn, conn.transaction():
            removed = await delete_admin(conn, tenant, actor.surface, principal)
            if removed:
                await self._audit(conn, tenant, actor, "admin.removed", principal, "admin", None)
        if not removed:
            return refused(f"{principal} was not an admin added here (already removed?)")
        return Outcome(True, f"{principal} no longer changes settings")

    async def remove_source(self, tenant: str, actor: Actor, source_id: str) -> Outcome:
        if not await self.may_change(tenant, actor):
            return refused(NOT_ADMIN)
        row = await own_source(self._store, tenant, source_id)
        if row is None:
            return refused("That source is gone already (the page was out of date).")
        async with self._store.pool.connection() as conn, conn.transaction():
            cur = await conn.execute(
                "DELETE FROM sources WHERE source_id = %s AND tenant_id = %s",
                (row.source_id, tenant),
            )
            if cur.rowcount == 0:
                return refused("That source is gone already (the page was out of date).")
            summary = {"kind": row.kind, **row.settings}
            await self._audit(conn, tenant, actor, "source.removed", row.name, summary, None)
        return Outcome(True, f"source {row.name} removed; its runbooks stay searchable")

    async def audit(
        self, tenant: str, actor: Actor, action: str, target: str, before: Any, after: Any
    ) -> None:
        async with self._store.pool.connection() as conn, conn.transaction():
            await self._audit(conn, tenant, actor, action, target, before, after)

    async def _audit(
        self,
        conn: Any,
        tenant: str,
        actor: Actor,
        action: str,
        target: str,
        before: Any,
        after: Any,
    ) -> None:
        await record_change(
            conn,
            tenant=tenant,
            actor=actor.user_id,
            surface=actor.surface,
            action=action,
            target=target,
            before=before,
            after=after,
        )


_SET_SWITCH = {
    "alerts": """
INSERT INTO channel_settings (tenant_id, team_id, channel_id, alerts)
VALUES (%(tenant)s, %(team)s, %(channel)s, %(on)s)
ON CONFLICT (tenant_id, team_id, channel_id)
    DO UPDATE SET alerts = excluded.alerts, updated_at = now()
""",
    "follow_ups": """
INSERT INTO channel_settings (tenant_id, team_id, channel_id, follow_ups)
VALUES (%(tenant)s, %(team)s, %(channel)s, %(on)s)
ON CONFLICT (tenant_id, team_id, channel_id)
    DO UPDATE SET follow_ups = excluded.follow_ups, updated_at = now()
""",
}


async def _serialise(conn: Any, tenant: str, setting: str) -> None:
    """One change of a setting at a time (until the transaction ends), also before its first
    row exists: each change reads the value the previous one wrote, and audits it as before."""
    await conn.execute(
        "SELECT pg_advisory_xact_lock(hashtext(%s), hashtext(%s))", (tenant, setting)
    )


async def own_source(store: Store, tenant: str, source_id: str) -> SourceRow | None:
    """The source if it exists and is ``tenant``'s; None for another tenant's or a bad id."""
    try:
        parsed = uuid.UUID(source_id)
    except ValueError:
        return None
    row = await get_source(store, parsed)
    return row if row is not None and row.tenant_id == tenant else None
