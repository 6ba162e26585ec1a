"""What every surface's review step shares: the runbook it may extend, the reviewed text as the
file that goes out, the draft as a section of another runbook, and the words for the change."""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass

from bot.core.drafts.compose import RunbookDraft
from rag import RagService

logger = logging.getLogger(__name__)

_HEADINGS = re.compile(r"^(#{1,5}) ", re.M)
_FRONT = re.compile(r"\A---\n.*?\n---\n\s*# [^\n]*\n", re.S)
KINDS = {
    "github": "pull request",
    "gitlab": "merge request",
    "confluence": "Confluence draft page",
}


@dataclass(frozen=True)
class Nearest:
    """The existing runbook a draft may be appended to."""

    document_id: str
    title: str


async def nearest_runbook(
    service: RagService | None, tenant: str, draft: RunbookDraft
) -> Nearest | None:
    """The existing runbook the draft is nearest to, when retrieval would answer from it."""
    if service is None:
        # A web process (`runbook serve --role web`) never retrieves: no suggestion there.
        return None
    query = " ".join([draft.title, *draft.symptoms])[:1000]
    try:
        found = await service.retrieve(tenant, query)
    except Exception:  # the draft stands without a suggestion
        logger.warning("no nearest runbook for a draft of %s", tenant, exc_info=True)
        return None
    if found.gate.reason is not None or not found.candidates.evidence:
        return None
    best = found.candidates.evidence[0]
    return Nearest(best.document_id, best.title)


def reviewed_markdown(title: str, owner: str | None, text: str) -> str:
    """The file as reviewed: frontmatter (title, owner), the title, the edited text."""
    front = [f"title: {json.dumps(title)}"] + ([f"owner: {json.dumps(owner)}"] if owner else [])
    return "\n".join(["---", *front, "---", "", f"# {title}", "", text.strip(), ""])


def destination_of(value: str) -> str:
    """A dialog's choice (``new`` or ``append:<document id>``) as ``Submission.destination``."""
    return value.removeprefix("append:") if value.startswith("append:") else "new"


def as_section(title: str, markdown: str) -> str:
    """The draft as a section appended to another runbook: its headings one level down."""
    body = _FRONT.sub("", markdown, count=1).strip()
    return f"## {title}\n\n" + _HEADINGS.sub(lambda m: "#" + m.group(1) + " ", body) + "\n"
