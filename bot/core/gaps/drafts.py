"""``runbook gaps --draft GAP_ID``: a Markdown runbook skeleton for a gap no runbook covers.

Title from the gap's label, its questions as symptoms (while their text is retained), and the
sections an owner fills in left empty: the bot never invents a diagnosis.
"""

from __future__ import annotations

from collections.abc import Sequence


def draft_title(alert: str | None, terms: Sequence[str], fallback: str) -> str:
    if alert:
        return alert
    if terms:
        words = " ".join(terms)
        return words[0].upper() + words[1:]
    return fallback


def render_draft(
    *,
    title: str,
    owner: str,
    service: str | None,
    questions: Sequence[str],
    asked: int,
    first_asked: str,
    last_asked: str,
) -> str:
    front = ["---", f"title: {_yaml(title)}", f"owner: {_yaml(owner)}"]
    if service:
        front.append(f"service: {_yaml(service)}")
    front.append("---")
    symptoms = [f"- {' '.join(q.split())}" for q in questions]
    expired = asked - len(questions)
    if expired > 0:
        symptoms.append(
            f"- ({expired} more question{'s' if expired != 1 else ''} asked between "
            f"{first_asked} and {last_asked}; their text is past retention)"
        )
    return "\n".join(
        [
            *front,
            "",
            f"# {title}",
            "",
            "## Symptoms",
            "",
            *symptoms,
            "",
            "## Diagnosis",
            "",
            "## Mitigation",
            "",
        ]
    )


def _yaml(text: str) -> str:
    """A double-quoted YAML scalar: any title is safe front matter."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return f'"{escaped}"'
