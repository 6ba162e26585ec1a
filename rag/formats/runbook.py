"""Value types of a parsed runbook and its chunks, shared by parsing, chunking and ingestion."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, field_validator


class Frontmatter(BaseModel):
    """The YAML frontmatter we understand; other keys are ignored (real collections have many)."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    id: str | None = None
    title: str | None = None
    service: str | None = None
    tags: tuple[str, ...] = ()
    owner: str | None = None
    url: str | None = None
    updated: str | None = None
    superseded_by: str | None = None

    @field_validator(
        "id", "title", "service", "owner", "url", "superseded_by", "updated", mode="before"
    )
    @classmethod
    def _scalar_to_text(cls, value: object) -> object:
        # YAML reads `id: 1234`, `updated: 2026-03-01` and `title: 2024` as numbers or dates.
        if isinstance(value, dt.date):
            return value.isoformat()
        if isinstance(value, int | float) and not isinstance(value, bool):
            return str(value)
        return value

    @field_validator("tags", mode="before")
    @classmethod
    def _tags_from_text(cls, value: object) -> object:
        if isinstance(value, str):
            return tuple(tag.strip() for tag in value.split(",") if tag.strip())
        if isinstance(value, list):
            return tuple(
                str(tag) if isinstance(tag, int | float) and not isinstance(tag, bool) else tag
                for tag in value
            )
        return value


@dataclass(frozen=True)
class Section:
    """The body of one section: the Markdown between its heading and the next heading."""

    heading_path: tuple[str, ...]
    text: str


@dataclass(frozen=True)
class ParsedRunbook:
    frontmatter: Frontmatter
    title: str
    sections: tuple[Section, ...]
    has_headings: bool


@dataclass(frozen=True)
class ChunkDraft:
    """A chunk before it is embedded: never straddles two sections, never over the size cap."""

    ordinal: int
    heading_path: tuple[str, ...]
    content: str
