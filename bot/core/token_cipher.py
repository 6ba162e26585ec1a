"""Secrets at rest (Slack OAuth tokens, source credentials and webhook secrets, Graph
clientStates) sealed with Fernet keys from ``RUNBOOK_ENCRYPTION_KEYS``.

The setting holds comma-separated Fernet keys: the first seals, every one opens (MultiFernet),
so a key is rotated by putting the new one first, re-sealing the rows (``runbook secrets
reencrypt``) and then dropping the old one. A sealed value is stored as ``{"sealed": token}`` in
the same jsonb column that held the plaintext, so rows written before sealing are recognised
(and re-sealed on read).
"""

from __future__ import annotations

import json
from typing import Any

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from pydantic import SecretStr

from rag import ConfigurationError

SEALED = "sealed"
KEYS_SETTING = "RUNBOOK_ENCRYPTION_KEYS"
_GENERATE_HINT = (
    "generate one with `runbook secrets generate-key` (or "
    "`python -c 'from cryptography.fernet import Fernet; print(Fernet.generate_key().decode())'`)"
)


class SecretUnreadableError(ConfigurationError):
    """A stored value sealed with a key that is not in the setting (rotated out too soon)."""

    code = "secret_unreadable"


class TokenCipher:
    """Seals and opens JSON objects; ``rotated`` tells whether a value needs re-sealing."""

    def __init__(self, keys: list[bytes]) -> None:
        if not keys:
            raise ConfigurationError(f"{KEYS_SETTING} holds no key; {_GENERATE_HINT}")
        self._primary = Fernet(keys[0])
        self._all = MultiFernet([Fernet(key) for key in keys])

    @classmethod
    def from_setting(cls, value: SecretStr | None, *, sealing: str) -> TokenCipher:
        """The cipher for the setting's keys; a clear error when it is missing or malformed.
        ``sealing``: what the caller keeps encrypted, named in that error."""
        if value is None or not value.get_secret_value().strip():
            raise ConfigurationError(
                f"{sealing} are encrypted at rest: set {KEYS_SETTING} to a Fernet key; "
                f"{_GENERATE_HINT}"
            )
        keys = [k.strip().encode() for k in value.get_secret_value().split(",") if k.strip()]
        try:
            return cls(keys)
        except ValueError as exc:  # never echo the value: it is a secret
            raise ConfigurationError(
                f"{KEYS_SETTING} must be comma-separated Fernet keys (32 url-safe base64 bytes); "
                f"{_GENERATE_HINT}"
            ) from exc

    def seal(self, data: dict[str, Any]) -> dict[str, str]:
        plain = json.dumps(data, separators=(",", ":")).encode()
        return {SEALED: self._primary.encrypt(plain).decode()}

    def open(self, stored: dict[str, Any], *, what: str = "a stored secret") -> dict[str, Any]:
        """The plaintext object of a stored value (a row written before sealing passes as is);
        ``what`` names the value in the error when no key opens it."""
        if not is_sealed(stored):
            return stored
        try:
            plain = self._all.decrypt(str(stored[SEALED]).encode())
        except InvalidToken as exc:
            raise SecretUnreadableError(
                f"{what} was sealed with a key that is not in {KEYS_SETTING}; put the old key "
                "back (after the new one) and run `runbook secrets reencrypt`"
            ) from exc
        data: dict[str, Any] = json.loads(plain)
        return data

    def needs_resealing(self, stored: dict[str, Any]) -> bool:
        """True for plaintext rows and rows sealed with a key other than the first."""
        if not is_sealed(stored):
            return True
        token = str(stored[SEALED]).encode()
        try:
            self._primary.decrypt(token)
        except InvalidToken:
            return True
        return False


def is_sealed(stored: dict[str, Any]) -> bool:
    return set(stored) == {SEALED}


def generate_key() -> str:
    return Fernet.generate_key().decode()
