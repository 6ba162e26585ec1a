"""Who a row of the gap report belongs to: the runbook's owner, else its service's, else the
tenant default (``runbook owner default``).

A runbook's owner is ``documents.owner`` (frontmatter, CODEOWNERS or the Confluence author,
whichever its source gave); a service's owner is the target ``runbook owner map TENANT SERVICE
TARGET`` gives the service name, else the owner most of the service's runbooks name.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from bot.core.gaps.data import GapInputs
from bot.core.owners.runbook_owners import DEFAULT_NAME, target_kind

RUNBOOK, SERVICE, DEFAULT, NONE = "runbook", "service", "default", "none"
UNOWNED = "unowned"


@dataclass(frozen=True)
class Owner:
    name: str  # as written (frontmatter name or chat target); "unowned" without any
    target: str | None  # the chat target the digest goes to
    source: str  # "runbook", "service", "default" or "none"


@dataclass(frozen=True)
class Owners:
    inputs: GapInputs

    def for_runbook(self, document_id: str) -> Owner:
        row = self.inputs.documents.get(document_id)
        if row is not None and (row.owner or "").strip():
            name = (row.owner or "").strip()
            return Owner(name, self._target(name), RUNBOOK)
        return self.for_service(row.service if row is not None else None)

    def for_service(self, service: str | None) -> Owner:
        if service:
            mapped = self.inputs.owner_targets.get(service.lower())
            if mapped:
                return Owner(service, mapped, SERVICE)
            named = Counter(
                (d.owner or "").strip()
                for d in self.inputs.documents.values()
                if d.service == service and (d.owner or "").strip()
            )
            if named:
                name = min(named, key=lambda n: (-named[n], n))
                return Owner(name, self._target(name), SERVICE)
        return self.default()

    def default(self) -> Owner:
        fallback = self.inputs.owner_targets.get(DEFAULT_NAME)
        if fallback:
            return Owner(fallback, fallback, DEFAULT)
        return Owner(UNOWNED, None, NONE)

    def _target(self, name: str) -> str | None:
        if target_kind(name) is not None:
            return name
        return self.inputs.owner_targets.get(name.lower()) or self.inputs.owner_targets.get(
            DEFAULT_NAME
        )


def owned_by(owner: Owner, wanted: str) -> bool:
    """``runbook gaps --owner X``: X is the owner's name or its chat target."""
    wanted = wanted.strip().lower()
    return wanted in {owner.name.lower(), (owner.target or "").lower()}
