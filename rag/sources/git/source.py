"""The git kind of source: a branch of a repository (optionally one folder of it), read with
the git CLI into a bare cache under ``RUNBOOK_DATA_DIR/sources/<source id>``.

Fetches bring commits and trees only (``--filter=blob:none`` where the server allows it):
enough to list every runbook file with its blob id, which is the item's version, and to date
each file by its last commit; file contents are fetched for the changed files alone. Files are
read from git's object store, never from a checkout, so a symbolic link is never followed (it
is listed as skipped), and neither is a submodule.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath

from pydantic import BaseModel, ConfigDict, field_validator

from rag.errors import IngestFileError, IngestFileSkipped, SourceSyncError
from rag.formats import runbook_suffix
from rag.ingest.files import decode_runbook_bytes, parse_source
from rag.sources.git.cli import (
    FETCH_TIMEOUT_S,
    LOCAL_TIMEOUT_S,
    GitCredential,
    check_git_url,
    git_environment,
    run_git,
)
from rag.sources.git.links import CODEOWNERS_PATHS, OwnerRule, owner_of, parse_codeowners, web_url
from rag.sources.reader import ItemProblem, SourceDocument, SourceListing, SourceMeta, SourceRead

_SYMLINK_MODE = "120000"
_SUBMODULE_MODE = "160000"


class GitSourceSettings(BaseModel):
    """``sources.settings`` of a git source."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    url: str
    branch: str = "main"
    path: str = ""

    @field_validator("url")
    @classmethod
    def _known_transport(cls, value: str) -> str:
        try:
            return check_git_url(value)
        except SourceSyncError as exc:
            raise ValueError(exc.reason) from exc

    @field_validator("path")
    @classmethod
    def _folder_inside(cls, value: str) -> str:
        folder = PurePosixPath(value.strip("/"))
        if folder.is_absolute() or ".." in folder.parts:
            raise ValueError("--path must be a folder inside the repository")
        return "" if str(folder) == "." else str(folder)

    @field_validator("branch")
    @classmethod
    def _plain_branch(cls, value: str) -> str:
        if not value or value.startswith("-") or any(c in value for c in " ~^:?*[\\"):
            raise ValueError(f"{value!r} is not a branch name")
        return value.removeprefix("refs/heads/")


@dataclass(frozen=True)
class GitReader:
    """One git source. ``cache_dir`` is its own; the sync holds the tenant lock around it."""

    name: str
    settings: GitSourceSettings
    credential: GitCredential | None
    cache_dir: Path
    max_file_bytes: int

    async def list_items(self) -> SourceListing:
        return await asyncio.to_thread(self._list)

    async def read_items(
        self, listing: SourceListing, item_ids: Sequence[str], *, max_bytes: int | None = None
    ) -> SourceRead:
        return await asyncio.to_thread(self._read, listing, list(item_ids), max_bytes)

    @property
    def _ref(self) -> str:
        return f"refs/heads/{self.settings.branch}"

    def _git(
        self,
        args: Sequence[str],
        *,
        stdin: bytes | None = None,
        timeout_s: float = LOCAL_TIMEOUT_S,
        branch: str | None = None,
    ) -> bytes:
        with git_environment(self.credential, self.cache_dir / "known_hosts") as env:
            return run_git(
                self.name,
                args,
                env=env,
                cwd=self.cache_dir,
                stdin=stdin,
                timeout_s=timeout_s,
                branch=branch,
            )

    def _list(self) -> SourceListing:
        self._fetch()
        commit = self._git(["rev-parse", "--verify", f"{self._ref}^{{commit}}"]).decode().strip()
        prefix = f"{self.settings.path}/" if self.settings.path else ""
        tree = self._git(["ls-tree", "-r", "-z", "--full-tree", commit, "--", prefix or "."])
        items: dict[str, str] = {}
        passed_over: dict[str, str] = {}
        for entry in tree.decode("utf-8", "surrogateescape").split("\0"):
            if not entry:
                continue
            header, _, path = entry.partition("\t")
            mode, _, blob = header.split(" ")
            if not path.startswith(prefix) or mode == _SUBMODULE_MODE:
                continue
            relative = path[len(prefix) :]
            name = PurePosixPath(relative).name
            if runbook_suffix(name) is None or any(
                part.startswith(".") for part in PurePosixPath(relative).parts
            ):
                continue
            if mode == _SYMLINK_MODE:
                passed_over[relative] = "symbolic link (not followed)"
            else:
                items[relative] = blob
        return SourceListing(items=items, passed_over=passed_over, version=commit)

    def _fetch(self) -> None:
        self.cache_dir.mkdir(parents=True, exist_ok=True)
        if not (self.cache_dir / "HEAD").exists():
            self._git(["init", "--bare", "-q", "."])
            self._git(["remote", "add", "origin", self.settings.url])
        else:
            self._git(["remote", "set-url", "origin", self.settings.url])
        self._git(
            [
                *("fetch", "--quiet", "--no-tags", "--prune", "--filter=blob:none"),
                *("--no-write-fetch-head", "origin", f"+{self._ref}:{self._ref}"),
            ],
            timeout_s=FETCH_TIMEOUT_S,
            branch=self.settings.branch,
        )

    def _read(
        self, listing: SourceListing, item_ids: list[str], max_bytes: int | None
    ) -> SourceRead:
        if not item_ids:
            return SourceRead()
        fitting = (
            len(item_ids) if max_bytes is None else self._fitting(listing, item_ids, max_bytes)
        )
        read = SourceRead(unread=item_ids[fitting:])
        item_ids = item_ids[:fitting]
        prefix = f"{self.settings.path}/" if self.settings.path else ""
        contents = self._blobs([listing.items[item] for item in item_ids])
        dates = self._commit_dates(listing.version, [prefix + item for item in item_ids])
        owners = self._codeowners(listing.version)
        for item in item_ids:
            blob = listing.items[item]
            raw = contents.get(blob)
            problem = self._problem(item, raw)
            if problem is not None:
                read.problems.append(problem)
                continue
            assert raw is not None
            try:
                text = decode_runbook_bytes(Path(item), raw)
                parsed = parse_source(Path("."), Path(item), raw, text)
            except IngestFileSkipped as exc:
                read.problems.append(ItemProblem(item, exc.reason, skipped=True))
                continue
            except IngestFileError as exc:
                read.problems.append(ItemProblem(item, exc.reason, skipped=False))
                continue
            full_path = prefix + item
            read.documents.append(
                SourceDocument(
                    item_id=item,
                    version=blob,
                    document_id=parsed.document_id,
                    path=item,
                    sha256=parsed.sha256,
                    runbook=parsed.runbook,
                    meta=SourceMeta(
                        url=web_url(self.settings.url, listing.version, full_path),
                        updated=dates.get(full_path),
                        owner=owner_of(owners, full_path),
                    ),
                )
            )
        return read

    def _problem(self, item: str, raw: bytes | None) -> ItemProblem | None:
        if raw is None:
            return ItemProblem(item, "missing from the fetched objects", skipped=False)
        if len(raw) > self.max_file_bytes:
            return ItemProblem(
                item, f"file is {len(raw)} bytes, over the {self.max_file_bytes}-byte cap", True
            )
        if b"\x00" in raw:
            return ItemProblem(item, "binary file (contains NUL bytes)", skipped=True)
        return None

    def _fitting(self, listing: SourceListing, item_ids: list[str], max_bytes: int) -> int:
        """How many of ``item_ids``, from the first, it takes to read ``max_bytes`` (or all).

        Sizes come from ``cat-file --batch-check``, which fetches a partial clone's missing
        blobs to disk on the way, so the ``--batch`` read after it holds only what fits.
        """
        blobs = [listing.items[item] for item in item_ids]
        out = self._git(
            ["cat-file", "--batch-check"],
            stdin="".join(f"{blob}\n" for blob in blobs).encode(),
            timeout_s=FETCH_TIMEOUT_S,
        )
        sizes: dict[str, int] = {}
        for line in out.decode().splitlines():
            header = line.split(" ")
            if len(header) == 3:  # not "<id> missing", which the read reports
                sizes[header[0]] = int(header[2])
        total = 0
        for count, blob in enumerate(blobs, start=1):
            total += sizes.get(blob, 0)
            if total >= max_bytes:
                return count
        return len(blobs)

    def _blobs(self, blobs: list[str]) -> dict[str, bytes]:
        """Blob id → bytes, through one ``cat-file --batch`` (a partial clone fetches the
        missing ones from the remote on the way)."""
        out = self._git(
            ["cat-file", "--batch"],
            stdin="".join(f"{blob}\n" for blob in blobs).encode(),
            timeout_s=FETCH_TIMEOUT_S,
        )
        found: dict[str, bytes] = {}
        offset = 0
        while offset < len(out):
            end = out.index(b"\n", offset)
            header = out[offset:end].decode().split(" ")
            offset = end + 1
            if len(header) != 3:
                continue  # "<id> missing"
            size = int(header[2])
            found[header[0]] = out[offset : offset + size]
            offset += size + 1
        return found

    def _commit_dates(self, commit: str, paths: list[str]) -> dict[str, str]:
        """Each path's last commit day (YYYY-MM-DD), from one ``git log`` over the history."""
        wanted = set(paths)
        folder = self.settings.path or "."
        log = self._git(
            [
                *("-c", "core.quotePath=false", "log", "--format=%x00%ct"),
                *("--name-only", "--no-renames", commit, "--", folder),
            ],
            timeout_s=FETCH_TIMEOUT_S,
        )
        found: dict[str, str] = {}
        day = ""
        for line in log.decode("utf-8", "surrogateescape").splitlines():
            if line.startswith("\0"):
                day = datetime.fromtimestamp(int(line[1:]), UTC).date().isoformat()
            elif line in wanted and line not in found and day:
                found[line] = day
                if len(found) == len(wanted):
                    break
        return found

    def _codeowners(self, commit: str) -> list[OwnerRule]:
        for path in CODEOWNERS_PATHS:
            try:
                text = self._git(["cat-file", "blob", f"{commit}:{path}"])
            except SourceSyncError:
                continue
            return parse_codeowners(text.decode("utf-8", "replace"))
        return []
