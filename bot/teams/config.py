"""How the Teams surface runs, decided from settings: production, local mode, or not configured.

Production needs the Azure bot registration (app id, password, home tenant) and validates every
inbound token. Local mode (``TEAMS_ALLOW_UNAUTHENTICATED=true``) is for tests and trying it out:
header-less activities are accepted and outbound calls go unsigned, so it may only listen on a
loopback address, and never beside a production registration.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from typing import Literal

from rag import Settings

_REGISTRATION = ("TEAMS_APP_ID", "TEAMS_APP_PASSWORD", "TEAMS_TENANT_ID")
_UNCONFIGURED = (
    "Teams is not configured: set TEAMS_APP_ID, TEAMS_APP_PASSWORD and TEAMS_TENANT_ID "
    "(the Azure bot registration), or TEAMS_APP_ID and TEAMS_ALLOW_UNAUTHENTICATED=true "
    "for the local mode"
)


@dataclass(frozen=True)
class TeamsMode:
    """``kind`` is None when Teams is not (fully) configured; ``missing`` names what to set,
    ``conflicting`` the production settings that local mode was asked for beside."""

    kind: Literal["production", "local"] | None
    missing: tuple[str, ...] = ()
    conflicting: tuple[str, ...] = ()

    @property
    def partly_configured(self) -> bool:
        return self.kind is None and bool(self.missing)

    def explain(self) -> str:
        if self.conflicting:
            return (
                f"TEAMS_ALLOW_UNAUTHENTICATED=true cannot run beside "
                f"{' and '.join(self.conflicting)}: local mode accepts unsigned activities, "
                "so a production registration must never fall back to it; unset one or the other"
            )
        if self.kind == "production":
            return "Teams is configured"
        if self.kind == "local":
            return "Teams runs in local mode (unauthenticated)"
        if not self.missing:
            return _UNCONFIGURED
        return f"Teams is not fully configured: missing {' and '.join(self.missing)}"


def teams_mode(settings: Settings) -> TeamsMode:
    if settings.teams_allow_unauthenticated:
        # A production secret beside the local switch means a production host with a leftover
        # test flag; answering unsigned activities there would accept any tenant's traffic.
        conflicting = tuple(
            name
            for name, given in (
                ("TEAMS_APP_PASSWORD", settings.teams_app_password is not None),
                ("TEAMS_TENANT_ID", bool(settings.teams_tenant_id)),
            )
            if given
        )
        if conflicting:
            return TeamsMode(None, conflicting=conflicting)
        if settings.teams_app_id:
            return TeamsMode("local")
        return TeamsMode(None, ("TEAMS_APP_ID",))
    present = (
        bool(settings.teams_app_id),
        settings.teams_app_password is not None,
        bool(settings.teams_tenant_id),
    )
    if all(present):
        return TeamsMode("production")
    missing = tuple(name for name, ok in zip(_REGISTRATION, present, strict=True) if not ok)
    return TeamsMode(None, missing if any(present) else ())


def is_loopback(host: str) -> bool:
    """True for addresses only this machine can reach (127.0.0.0/8, ::1, localhost)."""
    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False
