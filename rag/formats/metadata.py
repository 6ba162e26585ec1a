"""Runbook metadata given the way each format gives it (HTML ``<meta>``, reStructuredText field
lists, AsciiDoc attributes), checked as strictly as Markdown front matter."""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import ValidationError

from rag.errors import RunbookFormatError
from rag.formats.runbook import Frontmatter

FIELDS = frozenset(Frontmatter.model_fields)


def field_name(name: str) -> str:
    """``Superseded-By`` and ``superseded_by`` both name the field ``superseded_by``."""
    return name.strip().lower().replace("-", "_")


def frontmatter_from_fields(fields: Mapping[str, str]) -> Frontmatter:
    """The fields named like front-matter keys, as a ``Frontmatter``; other names are ignored.

    Raises ``RunbookFormatError`` naming the field whose value is not usable.
    """
    known = {field_name(name): value.strip() for name, value in fields.items()}
    present = {name: value for name, value in known.items() if name in FIELDS and value}
    try:
        return Frontmatter.model_validate(present)
    except ValidationError as exc:
        field = str(exc.errors()[0]["loc"][0])
        raise RunbookFormatError(f"metadata field {field!r} is not usable") from exc
