"""Finding runbook files on disk and reading them safely: tenants, links, ids, bad files."""

from __future__ import annotations

import hashlib
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from rag.errors import (
    ConfigurationError,
    EmptyRunbookError,
    IngestFileError,
    IngestFileSkipped,
    RunbookFormatError,
    RunbookTooLargeError,
)
from rag.formats import parse_document, runbook_suffix
from rag.formats.runbook import ParsedRunbook
from rag.ingest.tenant_ids import validate_tenant


@dataclass(frozen=True)
class TenantFolder:
    tenant: str
    root: Path


@dataclass(frozen=True)
class SourceFile:
    """A runbook file that read and parsed cleanly."""

    path: Path
    relative_path: str
    document_id: str
    sha256: str
    runbook: ParsedRunbook


SYMLINK_REASON = "symbolic link (not followed)"
SECTION_PAGE_REASON = "no text after the frontmatter (a section page)"


@dataclass(frozen=True)
class SkippedPath:
    """A path deliberately not ingested, with why: listed in the report, not a failure."""

    path: Path
    reason: str


@dataclass(frozen=True)
class FolderListing:
    """A tenant folder's runbook files, the links skipped, and the folders that cannot be read."""

    files: list[Path] = field(default_factory=list)
    skipped: list[SkippedPath] = field(default_factory=list)
    unreadable: list[SkippedPath] = field(default_factory=list)


def discover_tenants(root: Path, tenant: str | None) -> list[TenantFolder]:
    """Apply the identity rule: ``--tenant T`` names ROOT itself, else each subfolder is one.

    A symbolic link among ROOT's subfolders is no tenant (``linked_tenant_folders`` lists them):
    it would make another folder's runbooks readable under a tenant name of its choosing.
    """
    if not root.is_dir():
        raise ConfigurationError(f"{root} is not a folder")
    if tenant is not None:
        return [TenantFolder(validate_tenant(tenant), root)]
    folders = [
        TenantFolder(validate_tenant(path.name), path)
        for path in _visible_children(root)
        if path.is_dir() and not path.is_symlink()
    ]
    if not folders:
        raise ConfigurationError(
            f"{root} has no tenant subfolders; pass --tenant T to ingest it as one tenant"
        )
    return folders


def linked_tenant_folders(root: Path, tenant: str | None) -> list[SkippedPath]:
    """The symbolic links to folders that ``discover_tenants`` passed over."""
    if tenant is not None or not root.is_dir():
        return []
    return [
        SkippedPath(path, SYMLINK_REASON)
        for path in _visible_children(root)
        if path.is_symlink() and path.is_dir()
    ]


def _visible_children(root: Path) -> list[Path]:
    return sorted(p for p in root.iterdir() if not p.name.startswith("."))


def list_runbook_files(folder: Path) -> list[Path]:
    return scan_folder(folder).files


def scan_folder(folder: Path) -> FolderListing:
    """Every runbook file (``*.md``, ``*.rst``, ``*.adoc``, ``*.html`` …; ``RUNBOOK_SUFFIXES``)
    under ``folder``, hidden entries aside, without following any link.

    Git keeps symbolic links, so whoever commits to one tenant's repository could otherwise
    link in another tenant's runbooks or any file of the host.
    """
    listing = FolderListing()
    pending = [folder]
    while pending:
        current = pending.pop()
        try:
            with os.scandir(current) as scanned:
                entries = sorted(scanned, key=lambda entry: entry.name)
        except OSError as exc:
            listing.unreadable.append(SkippedPath(current, f"cannot list: {exc.strerror}"))
            continue
        for entry in entries:
            if entry.name.startswith("."):
                continue
            path = Path(entry.path)
            if entry.is_symlink():
                if runbook_suffix(entry.name) is not None or entry.is_dir():
                    listing.skipped.append(SkippedPath(path, SYMLINK_REASON))
            elif entry.is_dir(follow_symlinks=False):
                pending.append(path)
            elif runbook_suffix(entry.name) is not None:
                listing.files.append(path)
    listing.files.sort()
    listing.skipped.sort(key=lambda skipped: skipped.path)
    return listing


def path_document_id(folder: Path, path: Path) -> str:
    """The path relative to the tenant folder without its runbook suffix (``.md``, ``.rst`` …)."""
    relative = path.relative_to(folder).as_posix()
    return relative.removesuffix(runbook_suffix(path.name) or path.suffix)


def read_runbook_file(root: Path, path: Path, *, max_bytes: int) -> tuple[bytes, str]:
    """``read_text`` for a file of the tenant folder ``root``; refuse one that resolves outside.

    Listing follows no link, so this holds already; checking again at the read keeps it true
    when a folder on the way is swapped for a link in between.
    """
    if not path.resolve().is_relative_to(root.resolve()):
        raise IngestFileError(path, "resolves outside the tenant folder")
    return read_text(path, max_bytes=max_bytes)


def read_text(path: Path, *, max_bytes: int) -> tuple[bytes, str]:
    """Read one file's bytes and text, or raise ``IngestFileError`` saying why not.

    ``IngestFileSkipped`` (a subclass) marks files that are not runbooks rather than broken ones.
    """
    try:
        # O_NOFOLLOW: a file swapped for a link after listing is refused, not followed.
        # O_NONBLOCK: a named pipe must not hang the ingest.
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as exc:
        raise IngestFileError(path, f"cannot read: {exc.strerror}") from exc
    with os.fdopen(fd, "rb") as file:
        try:
            status = os.fstat(file.fileno())
            if not stat.S_ISREG(status.st_mode):
                raise IngestFileError(path, "not a regular file")
            if status.st_size > max_bytes:
                raise IngestFileError(
                    path, f"file is {status.st_size} bytes, over the {max_bytes}-byte cap"
                )
            raw = file.read(max_bytes + 1)
        except OSError as exc:
            raise IngestFileError(path, f"cannot read: {exc.strerror}") from exc
    if len(raw) > max_bytes:
        raise IngestFileError(path, f"file is over the {max_bytes}-byte cap")
    return raw, decode_runbook_bytes(path, raw)


def decode_runbook_bytes(path: Path, raw: bytes) -> str:
    """The text of a runbook file's bytes, or ``IngestFileError`` (empty, binary, not UTF-8)."""
    if not raw.strip():
        raise IngestFileSkipped(path, "empty file")
    if b"\x00" in raw:
        raise IngestFileError(path, "binary file (contains NUL bytes)")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise IngestFileError(path, f"not UTF-8 (invalid byte at offset {exc.start})") from exc


def content_sha256(raw: bytes) -> str:
    return hashlib.sha256(raw).hexdigest()


def parse_source(folder: Path, path: Path, raw: bytes, text: str) -> SourceFile:
    suffix = runbook_suffix(path.name) or path.suffix
    try:
        runbook = parse_document(
            text.removeprefix("\ufeff"), suffix=suffix, fallback_title=path.name[: -len(suffix)]
        )
    except EmptyRunbookError as exc:
        reason = SECTION_PAGE_REASON if suffix in (".md", ".markdown") else exc.reason
        raise IngestFileSkipped(path, reason) from exc
    except RunbookTooLargeError as exc:
        raise IngestFileSkipped(path, exc.reason) from exc
    except RunbookFormatError as exc:
        raise IngestFileError(path, exc.reason) from exc
    return SourceFile(
        path=path,
        relative_path=path.relative_to(folder).as_posix(),
        document_id=runbook.frontmatter.id or path_document_id(folder, path),
        sha256=content_sha256(raw),
        runbook=runbook,
    )
