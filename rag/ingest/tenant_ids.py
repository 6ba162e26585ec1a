"""What a tenant id may be, checked where one enters: an ingested folder or a workspace mapping.

Apart from ``rag.ingest.files`` so that checking an id loads no runbook format's parser.
"""

from __future__ import annotations

import re

from rag.errors import ConfigurationError

TENANT_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$")


def validate_tenant(tenant: str) -> str:
    if not TENANT_PATTERN.fullmatch(tenant):
        raise ConfigurationError(
            f"tenant id {tenant!r} must be 1-63 letters, digits, '.', '_' or '-', "
            "starting with a letter or digit"
        )
    return tenant
