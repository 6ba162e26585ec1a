"""Running a source's sync: its reader built from its row (the credential opened with
``RUNBOOK_ENCRYPTION_KEYS``), the sync itself, and the outcome recorded either way.

Shared by ``runbook source sync`` and the ``source.sync`` job of ``runbook serve``.
"""

from __future__ import annotations

import logging
import traceback
from dataclasses import dataclass

from bot.core.token_cipher import KEYS_SETTING, SecretUnreadableError, TokenCipher
from rag import (
    Embedder,
    GitCredential,
    GitReader,
    GitSourceSettings,
    RunbookError,
    Settings,
    SourceAccess,
    SourceReader,
    SourceRow,
    SourceSyncError,
    Store,
    SyncReport,
    confluence_reader,
    ingest_limits,
    record_failed,
    sync_source,
)

logger = logging.getLogger(__name__)

# The error code of a sync stopped by an error that is none of the project's own.
CRASHED = "source_crashed"


@dataclass(frozen=True)
class SyncOutcome:
    source: SourceRow
    report: SyncReport | None = None
    error: str | None = None
    error_code: str | None = None
    failures_in_row: int = 0

    @property
    def synced(self) -> bool:
        return self.report is not None

    def as_json(self) -> dict[str, object]:
        return {
            "tenant": self.source.tenant_id,
            "name": self.source.name,
            "source_id": str(self.source.source_id),
            "outcome": "synced" if self.synced else "failed",
            "error": self.error,
            "error_code": self.error_code,
            "report": None if self.report is None else self.report.as_json(),
        }


def cipher_or_none(settings: Settings) -> TokenCipher | None:
    """The cipher when ``RUNBOOK_ENCRYPTION_KEYS`` is set (sources without credentials need
    none)."""
    if settings.encryption_keys is None or not settings.encryption_keys.get_secret_value():
        return None
    return TokenCipher.from_setting(
        settings.encryption_keys, sealing="Source credentials and webhook secrets"
    )


def open_secret(
    stored: dict[str, object], cipher: TokenCipher | None, what: str
) -> dict[str, object]:
    """A source's stored secret, opened; ``SecretUnreadableError`` names ``what`` (e.g. "the
    credential of source 'acme/ops'") when no key is set or none in the setting opens it."""
    if set(stored) == {"sealed"}:
        if cipher is None:
            raise SecretUnreadableError(f"{what} is sealed: set {KEYS_SETTING} to open it")
        return cipher.open(stored, what=what)
    return stored


def reader_for(row: SourceRow, *, settings: Settings, cipher: TokenCipher | None) -> SourceReader:
    """The reader of ``row``'s kind, its credential opened."""
    label = f"{row.tenant_id}/{row.name}"
    opened = (
        {}
        if row.credential is None
        else open_secret(row.credential, cipher, f"the credential of source {label!r}")
    )
    if row.kind == "git":
        token, key = opened.get("token"), opened.get("ssh_key")
        return GitReader(
            name=label,
            settings=GitSourceSettings.model_validate(row.settings),
            credential=GitCredential(
                token=token if isinstance(token, str) else None,
                ssh_key=key if isinstance(key, str) else None,
            ),
            cache_dir=settings.data_dir / "sources" / str(row.source_id),
            max_file_bytes=settings.max_file_bytes,
            access=SourceAccess.from_settings(settings),
        )
    if row.kind == "confluence":
        return confluence_reader(
            label,
            row.settings,
            opened,
            max_page_bytes=settings.max_file_bytes,
            access=SourceAccess.from_settings(settings),
        )
    raise SourceSyncError(label, f"no reader for {row.kind!r} sources", code="source_unavailable")


async def run_sync(
    store: Store,
    embedder: Embedder,
    row: SourceRow,
    *,
    settings: Settings,
    cipher: TokenCipher | None,
    force: bool = False,
) -> SyncOutcome:
    """Sync ``row`` and record the outcome; a failure changes no document and is returned."""
    try:
        reader = reader_for(row, settings=settings, cipher=cipher)
        report = await sync_source(
            store, embedder, row, reader, ingest_limits(settings), force=force
        )
    except RunbookError as exc:
        failures = await record_failed(store, row.source_id, str(exc))
        logger.warning(
            "sync of source %s of %s failed (%s, %d in a row)",
            row.name,
            row.tenant_id,
            exc.code,
            failures,
        )
        return SyncOutcome(row, error=str(exc), error_code=exc.code, failures_in_row=failures)
    except Exception as exc:  # one source's surprise must not stop the others, nor go unrecorded
        return await _record_crash(store, row, exc)
    return SyncOutcome(row, report=report)


async def _record_crash(store: Store, row: SourceRow, exc: Exception) -> SyncOutcome:
    """An error none of the project's own: recorded by its kind alone (its text may quote a
    response or a setting) and logged with where it happened, never with what it said."""
    kind = type(exc).__name__
    error = f"the sync stopped on an unexpected error ({kind}); nothing was changed"
    failures = await record_failed(store, row.source_id, error)
    logger.error(
        "sync of source %s of %s stopped on an unexpected %s (%d in a row) at:\n%s",
        row.name,
        row.tenant_id,
        kind,
        failures,
        "".join(traceback.format_tb(exc.__traceback__)).rstrip(),
    )
    return SyncOutcome(row, error=error, error_code=CRASHED, failures_in_row=failures)
