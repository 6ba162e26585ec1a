"""What a delivery writes: one file on a branch named for the draft, and the request to merge it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class FileChange:
    """``content`` is the new file, or with ``append`` the section added at the end of the
    existing file ``path`` (read from the base branch)."""

    branch: str
    path: str
    content: str
    message: str
    title: str
    body: str
    append: bool = False

    def applied_to(self, existing: str | None) -> str:
        """The file's content once this change is made to ``existing``."""
        if not self.append or existing is None:
            return self.content
        return existing.rstrip("\n") + "\n\n" + self.content

    def made_in(self, current: str | None) -> bool:
        """Whether ``current`` (the file on the branch) already carries this change."""
        if current is None:
            return False
        return self.content.strip() in current if self.append else current == self.content


@dataclass(frozen=True)
class Delivered:
    """Where the draft now waits for review."""

    kind: str  # "github" | "gitlab" | "confluence" | "file"
    link: str
    number: int | None = None
    branch: str | None = None
    path: str | None = None
    created: bool = True  # False: an earlier attempt had made it already
