"""The git kind of source: a branch of a repository (optionally one folder of it), read with
the git CLI into a bare cache under ``RUNBOOK_DATA_DIR/sources/<source id>``.

Fetches bring commits, trees and the blobs under the file cap (``--filter=blob:limit=``, where
the server allows it): a blob over ``RUNBOOK_MAX_FILE_BYTES`` never reaches the cache's disk,
and the listing skips it from its size — the blob missing, or ``cat-file --batch-check``'s
size when the server sent it anyway — before any file is read, so no oversized blob is ever
held in memory. Each runbook file's blob id is the item's version; each file is dated by its
last commit. Files are read from git's object store, never from a checkout, so a symbolic link
is never followed (it is listed as skipped), and neither is a submodule. Only the fetch may
reach the remote (its URL checked and pinned by ``git_target``); every other git command may
use no transport, so a blob missing from the cache is never fetched behind the sync's back.
"""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath
from typing import Literal

from pydantic import BaseModel, ConfigDict, field_validator

from rag.errors import IngestFileError, IngestFileSkipped, SourceSyncError
from rag.formats import runbook_suffix
from rag.ingest.files import decode_runbook_bytes, parse_source
from rag.sources.access import SourceAccess
from rag.sources.git.cli import (
    FETCH_TIMEOUT_S,
    LOCAL_TIMEOUT_S,
    GitCredential,
    check_git_url,
    git_environment,
    run_git,
)
from rag.sources.git.links import CODEOWNERS_PATHS, OwnerRule, owner_of, parse_codeowners, web_url
from rag.sources.git.target import GitTarget, git_target
from rag.sources.reader import ItemProblem, SourceDocument, SourceListing, SourceMeta, SourceRead

_SYMLINK_MODE = "120000"
_SUBMODULE_MODE = "160000"


class GitSourceSettings(BaseModel):
    """``sources.settings`` of a git source."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    url: str
    branch: str = "main"
    path: str = ""
    # Where drafted runbooks go as pull / merge requests (issue 40); None: from the URL's host.
    forge: Literal["github", "gitlab"] | None = None
    api_url: str | None = None

    @field_validator("api_url")
    @classmethod
    def _api_base(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(("https://", "http://")):
            raise ValueError("--api-url must be an http(s) URL, e.g. https://HOST/api/v3")
        return None if value is None else value.rstrip("/")

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
    """One git source. ``cache_dir`` is its own; the sync holds the tenant lock around it.
    The fetch obeys ``access`` (public https/ssh addresses unless the operator allows more)."""

    name: str
    settings: GitSourceSettings
    credential: GitCredential | None
    cache_dir: Path
    max_file_bytes: int
    access: SourceAccess = SourceAccess()

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
        target: GitTarget | None = None,
    ) -> bytes:
        known_hosts = self.cache_dir / "known_hosts"
        with git_environment(self.credential, known_hosts, target) as env:
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
        sizes = self._sizes(commit, set(items.values()))
        cap = self.max_file_bytes
        for relative, blob in list(items.items()):
            size = sizes.get(blob)
            if size is None:
                passed_over[relative] = f"file is over the {cap}-byte cap (not fetched)"
            elif size > cap:
                passed_over[relative] = f"file is {size} bytes, over the {cap}-byte cap"
            else:
                continue
            del items[relative]
        return SourceListing(items=items, passed_over=passed_over, version=commit)

    def _sizes(self, commit: str, blobs: set[str]) -> dict[str, int]:
        """Blob id → size of the ``blobs`` the cache holds; a blob the size filter left on the
        server is absent (``rev-list --missing=print`` names it without fetching it)."""
        if not blobs:
            return {}
        objects = self._git(
            ["rev-list", "--objects", "--missing=print", "--no-walk", commit],
            timeout_s=FETCH_TIMEOUT_S,
        )
        missing = {
            line[1:].split(" ", 1)[0]
            for line in objects.decode("utf-8", "surrogateescape").splitlines()
            if line.startswith("?")
        }
        present = sorted(blobs - missing)
        if not present:
            return {}
        out = self._git(
            ["cat-file", "--batch-check"], stdin="".join(f"{blob}\n" for blob in present).encode()
        )
        sizes: dict[str, int] = {}
        for line in out.decode().splitlines():
            header = line.split(" ")
            if len(header) == 3:
                sizes[header[0]] = int(header[2])
        return sizes

    def _fetch(self) -> None:
        target = git_target(self.name, self.settings.url, self.access)
        # Blobs under the cap come with the fetch; one of exactly the cap's size is kept.
        wanted = f"blob:limit={self.max_file_bytes + 1}"
        if (self.cache_dir / "HEAD").exists() and self._filter() != wanted:
            self._reset_cache()  # made with another filter: its missing blobs mean nothing
        self.cache_dir.mkdir(parents=True, exist_ok=True)
        if not (self.cache_dir / "HEAD").exists():
            self._git(["init", "--bare", "-q", "."])
            self._git(["remote", "add", "--", "origin", self.settings.url])
            self._git(["config", "remote.origin.partialclonefilter", wanted])
        else:
            self._git(["remote", "set-url", "--", "origin", self.settings.url])
        self._git(
            [
                *("fetch", "--quiet", "--no-tags", "--prune", f"--filter={wanted}"),
                *("--no-write-fetch-head", "origin", f"+{self._ref}:{self._ref}"),
            ],
            timeout_s=FETCH_TIMEOUT_S,
            branch=self.settings.branch,
            target=target,
        )

    def _filter(self) -> str:
        try:
            return (
                self._git(["config", "--get", "remote.origin.partialclonefilter"]).decode().strip()
            )
        except SourceSyncError:
            return ""

    def _reset_cache(self) -> None:
        """Start the cache over, keeping the host keys it pinned."""
        known_hosts = self.cache_dir / "known_hosts"
        pinned = known_hosts.read_bytes() if known_hosts.exists() else None
        shutil.rmtree(self.cache_dir)
        if pinned is not None:
            self.cache_dir.mkdir(parents=True)
            known_hosts.write_bytes(pinned)

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

        Sizes come from ``cat-file --batch-check``: every listed blob is in the cache (the
        listing passed over those the size filter left on the server), so nothing is fetched.
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
        """Blob id → bytes, through one ``cat-file --batch`` (each under the file cap: the
        listing passed over larger ones by their size)."""
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
