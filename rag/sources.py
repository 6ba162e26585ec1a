"""Finding runbook files on disk and reading them safely: tenants, document ids, bad files."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

from rag.errors import ConfigurationError, IngestFileError, RunbookFormatError
from rag.markdown import parse_runbook
from rag.runbook import ParsedRunbook

TENANT_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$")


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


def validate_tenant(tenant: str) -> str:
    if not TENANT_PATTERN.fullmatch(tenant):
        raise ConfigurationError(
            f"tenant id {tenant!r} must be 1-63 letters, digits, '.', '_' or '-', "
            "starting with a letter or digit"
        )
    return tenant


def discover_tenants(root: Path, tenant: str | None) -> list[TenantFolder]:
    """Apply the identity rule: ``--tenant T`` names ROOT itself, else each subfolder is one."""
    if not root.is_dir():
        raise ConfigurationError(f"{root} is not a folder")
    if tenant is not None:
        return [TenantFolder(validate_tenant(tenant), root)]
    folders = sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith("."))
    if not folders:
        raise ConfigurationError(
            f"{root} has no tenant subfolders; pass --tenant T to ingest it as one tenant"
        )
    return [TenantFolder(validate_tenant(p.name), p) for p in folders]


def list_runbook_files(folder: Path) -> list[Path]:
    return sorted(
        p
        for p in folder.rglob("*.md")
        if p.is_file() and not any(part.startswith(".") for part in p.relative_to(folder).parts)
    )


def path_document_id(folder: Path, path: Path) -> str:
    return path.relative_to(folder).with_suffix("").as_posix()


def read_text(path: Path, *, max_bytes: int) -> tuple[bytes, str]:
    """Read one file's bytes and text, or raise ``IngestFileError`` saying why not."""
    size = path.stat().st_size
    if size > max_bytes:
        raise IngestFileError(path, f"file is {size} bytes, over the {max_bytes}-byte cap")
    raw = path.read_bytes()
    if not raw.strip():
        raise IngestFileError(path, "empty file")
    if b"\x00" in raw:
        raise IngestFileError(path, "binary file (contains NUL bytes)")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise IngestFileError(path, f"not UTF-8 (invalid byte at offset {exc.start})") from exc
    return raw, text


def content_sha256(raw: bytes) -> str:
    return hashlib.sha256(raw).hexdigest()


def parse_source(folder: Path, path: Path, raw: bytes, text: str) -> SourceFile:
    try:
        runbook = parse_runbook(text.removeprefix("\ufeff"), fallback_title=path.stem)
    except RunbookFormatError as exc:
        raise IngestFileError(path, exc.reason) from exc
    return SourceFile(
        path=path,
        relative_path=path.relative_to(folder).as_posix(),
        document_id=runbook.frontmatter.id or path_document_id(folder, path),
        sha256=content_sha256(raw),
        runbook=runbook,
    )
