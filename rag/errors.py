"""The one exception tree of the core; every error carries a stable ``code``.

RunbookError
├── ConfigurationError          configuration_invalid
│   └── UnknownTenantError      tenant_unknown (tenant, known)
├── StoreError                  store_unavailable
├── EmbeddingError              embedding_failed
│   ├── ModelFileError          embedding_model_files_invalid
│   └── ModelMismatchError      embedding_model_mismatch
├── IngestFileError             ingest_file_invalid (path, reason)
│   └── IngestFileSkipped       ingest_file_skipped (listed, not a failure)
├── PruneRefusedError           prune_refused (tenant, retiring, current)
├── RunbookFormatError          runbook_format_invalid (reason)
│   ├── EmptyRunbookError       runbook_format_invalid (no text after the frontmatter)
│   └── RunbookTooLargeError    runbook_too_large (would grow past its bounds; skipped)
├── QuestionError               question_invalid
├── SourceSyncError             source_* (source, reason): a source could not be synced
├── AnswerProviderError         answer_provider_* (retryable)
└── ConfluenceError             confluence_* (space, base_url)
    ├── ConfluenceAuthError         confluence_auth_failed
    ├── ConfluenceNotFoundError     confluence_not_found
    ├── ConfluenceUnreachableError  confluence_unreachable (retryable)
    ├── ConfluenceResponseError     confluence_bad_response (status)
    └── ConfluenceRefusedError      source_address_refused (an address sources may not reach)
"""

from __future__ import annotations

from pathlib import Path


class RunbookError(Exception):
    """Base of every error the core raises on purpose."""

    code = "runbook_error"
    retryable = False


class ConfigurationError(RunbookError):
    code = "configuration_invalid"


class UnknownTenantError(ConfigurationError):
    """A command named a tenant the store has never seen (a typo, or not ingested yet)."""

    code = "tenant_unknown"

    def __init__(self, tenant: str, known: list[str]) -> None:
        self.tenant = tenant
        self.known = known
        names = ", ".join(known) if known else "none yet; run `runbook ingest` first"
        super().__init__(f"unknown tenant {tenant!r}; known tenants: {names}")


class StoreError(RunbookError):
    code = "store_unavailable"
    retryable = True


class EmbeddingError(RunbookError):
    code = "embedding_failed"
    retryable = True


class ModelFileError(EmbeddingError):
    code = "embedding_model_files_invalid"
    retryable = False


class ModelMismatchError(EmbeddingError):
    """The question would be embedded with another model than the tenant's stored chunks."""

    code = "embedding_model_mismatch"
    retryable = False

    def __init__(self, *, tenant: str, configured: str, stored: list[str]) -> None:
        self.tenant = tenant
        self.configured = configured
        self.stored = stored
        super().__init__(
            f"tenant {tenant!r} was ingested with {', '.join(stored)} but the configured "
            f"embedding model is {configured}; re-run `runbook ingest` with this model, "
            "or set RUNBOOK_EMBEDDING_MODEL back"
        )


class IngestFileError(RunbookError):
    """One runbook file that cannot be ingested; the rest of the run goes on."""

    code = "ingest_file_invalid"

    def __init__(self, path: Path, reason: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(f"{path}: {reason}")


class IngestFileSkipped(IngestFileError):
    """A file that is deliberately not ingested (empty, a section page, a symbolic link)."""

    code = "ingest_file_skipped"


class PruneRefusedError(RunbookError):
    """``--prune`` would retire more than half of a tenant's documents; ``--force`` allows it."""

    code = "prune_refused"

    def __init__(self, *, tenant: str, retiring: int, current: int) -> None:
        self.tenant = tenant
        self.retiring = retiring
        self.current = current
        share = "all" if retiring == current else "more than half"
        super().__init__(
            f"refusing to prune {retiring} of {current} current documents of tenant {tenant!r} "
            f"({share} of them); nothing was changed. Check the path (an empty or wrong folder "
            "looks like every runbook was deleted), or pass --force to prune anyway"
        )


class QuestionError(RunbookError):
    code = "question_invalid"


class AnswerProviderError(RunbookError):
    """The answer provider failed; ``code`` is one of the ``answer_provider_*`` codes."""

    code = "answer_provider_unavailable"

    def __init__(self, code: str, message: str, *, retryable: bool) -> None:
        self.code = code
        self.retryable = retryable
        super().__init__(message)


class RunbookFormatError(RunbookError):
    """A runbook's text cannot be parsed (bad frontmatter, empty body)."""

    code = "runbook_format_invalid"

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(reason)


class EmptyRunbookError(RunbookFormatError):
    """Frontmatter and nothing else: a section page (Hugo's ``_index.md``), not a runbook."""


class RunbookTooLargeError(RunbookFormatError):
    """A runbook that would grow past its bounds once read (AsciiDoc attribute expansion): it is
    skipped with its reason, and read again only when it changes."""

    code = "runbook_too_large"


class SourceSyncError(RunbookError):
    """A source (git repository, Confluence space) could not be read; nothing was changed.

    ``code`` says what to fix: ``source_unreachable``, ``source_auth_failed``,
    ``source_not_found`` (branch, space), ``source_unavailable`` (a kind this build cannot
    sync) or ``source_failed``. The message names the source and never holds a credential.
    """

    code = "source_failed"
    retryable = True

    def __init__(self, source: str, reason: str, *, code: str = "source_failed") -> None:
        self.source = source
        self.reason = reason
        self.code = code
        self.retryable = code in ("source_unreachable", "source_failed")
        super().__init__(f"source {source!r}: {reason}")


class ConfluenceError(RunbookError):
    """Reading a Confluence space failed; the message names the space and site, never a secret."""

    code = "confluence_error"

    def __init__(self, message: str, *, space_key: str, base_url: str) -> None:
        self.space_key = space_key
        self.base_url = base_url
        super().__init__(f"Confluence space {space_key} at {base_url}: {message}")


class ConfluenceAuthError(ConfluenceError):
    """The site refused the credentials (401) or the account may not read the space (403)."""

    code = "confluence_auth_failed"


class ConfluenceNotFoundError(ConfluenceError):
    """The space, or a page of it, does not exist (or is not current any more)."""

    code = "confluence_not_found"


class ConfluenceUnreachableError(ConfluenceError):
    """No usable answer: refused connection, timeout, or still throttled or failing when retried."""

    code = "confluence_unreachable"
    retryable = True


class ConfluenceResponseError(ConfluenceError):
    """An answer the client cannot use: unexpected status, a redirect, a body of the wrong shape."""

    code = "confluence_bad_response"

    def __init__(
        self, message: str, *, space_key: str, base_url: str, status: int | None = None
    ) -> None:
        self.status = status
        super().__init__(message, space_key=space_key, base_url=base_url)


class ConfluenceRefusedError(ConfluenceError):
    """The site's address is one sources may not reach (loopback, private, link-local, or
    plain http to a public address); the message names the operator setting that allows it."""

    code = "source_address_refused"
