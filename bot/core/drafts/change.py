"""What a delivery writes: one file on a branch named for the draft, and the request to merge it;
and the reviewed draft it writes it from."""

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


@dataclass(frozen=True)
class Submission:
    """A reviewed draft: ``destination`` is ``new`` or the document id of the runbook that
    gets ``section`` appended."""

    tenant: str
    draft_id: str
    title: str
    markdown: str
    section: str
    destination: str
    thread_link: str
    asked_by: str
    redactions: int

    @property
    def branch(self) -> str:
        return f"runbook-draft/{self.draft_id}"

    def description(self) -> str:
        secrets = (
            f" {self.redactions} secret(s) posted in the thread were redacted."
            if self.redactions
            else ""
        )
        return (
            f"Drafted by runbook-bot from [the incident thread]({self.thread_link}) at the request "
            f"of {self.asked_by}. Every step was posted in that thread by the person it names; "
            f"check each before merging.{secrets}\n\nDraft `{self.draft_id}`."
        )
